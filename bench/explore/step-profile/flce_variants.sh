#!/usr/bin/env bash
# Device script: kernel times of FLCE's logits and grad_hidden products by
# Hopper variant (matmul_kernel_times.py --set flce2), .gpu bundle carried.
set -uo pipefail
OUT=${OUT:-/tmp/myns-gpu}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader
python3 -c '
import glob, lzma, os
for f in glob.glob(".gpu/*.xz"):
    open(f[:-3], "wb").write(lzma.open(f).read()); os.remove(f)'
for r in 1 2; do
  echo "== round $r"
  python3 bench/explore/matmul_kernel_times.py --set ${SET:-flce2} --calls 20 --variants ${VARIANTS:-wg128c1,wg128c2,wg192c1,wg192c2,wg256c1,wg256c2,wg128c2/2,wg256c2/2}
done 2>&1 | tee "$OUT/flce-variants.log"
