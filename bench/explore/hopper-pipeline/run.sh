#!/usr/bin/env bash
# Device run (repo root; the library build/mmab/base.so.xz, 1e54be5's
# kernels): kernel times of fused_linear_cross_entropy's products and of the
# narrow tiles, ours per variant against cuBLAS (matmul_kernel_times.py).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIB=${LIB:-build/mmab/base.so}; [ -f $LIB ] || xz -dk $LIB.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$LIB
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 240 python3 bench/explore/matmul_kernel_times.py --calls 20 --set flce --variants ${FLCE_VARIANTS:-wg256,wg256c1,wg192,wg192c1,wg128,wgp128} 2>&1 | grep -v Warn > $OUT/flce.log
timeout 200 python3 bench/explore/matmul_kernel_times.py --calls 20 --set narrow --variants ${NARROW_VARIANTS:-wg64,wg128,wg128c2,wgp128,wgp64,wg192c1} 2>&1 | grep -v Warn > $OUT/narrow.log
grep -hv '^   ' $OUT/flce.log $OUT/narrow.log
