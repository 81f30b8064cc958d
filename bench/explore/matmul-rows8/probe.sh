#!/usr/bin/env bash
# The first a_rows8 library faulted (illegal instruction, mm_wgh128_bf16_kn):
# TMA at unaligned starts alone (tma_offset.cu), then one product per variant.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/*.xz"):
    with lzma.open(f) as src, open(f[:-3], "wb") as dst:
        dst.write(src.read())
    os.remove(f)
PY
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
X=bench/explore/matmul-rows8
nvcc -arch=sm_90a -o /tmp/tma_offset $X/tma_offset.cu -lcuda && /tmp/tma_offset
for v in wg wg128 wg128c2 wgp wgp128 wgh64 wgh128 auto; do
  timeout 60 python3 $X/probe.py $v 2>&1 | tail -1
done
timeout 60 python3 $X/probe.py wg 256 4096 256 2>&1 | tail -1
timeout 60 python3 $X/probe.py wg 128 1024 256 2>&1 | tail -1
