#!/usr/bin/env bash
# Device script: where the Llama step's GPU time goes now, myns against
# Liger-Kernel (16 layers, 4 x 2048, the benchmark's model), with the .gpu
# bundle and .whl/ carried. Log to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/myns-gpu}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/*.xz"):
    with lzma.open(f) as src, open(f[:-3], "wb") as dst:
        dst.write(src.read())
    os.remove(f)
PY
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
python3 bench/explore/compile_gap.py --layers 16 --only ${ONLY:-myns,liger} --top ${TOP:-70} --gaps ${GAPS:-0} 2>&1 | grep -v Warning | tee "$OUT/step-profile.log"
