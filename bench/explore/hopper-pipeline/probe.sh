#!/usr/bin/env bash
# Device run: which side of the Hopper kernel's pipeline limits it. Three
# libraries: base (1e54be5's kernels), probe1 (the consumers issue no
# wgmma: loads and barriers only), probe2 (the producer loads nothing: the
# wgmmas run on stale shared memory). Kernel times, no results checked.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
for L in ${LIBS:-base probe1 probe2}; do
  [ -f build/mmab/$L.so ] || xz -dk build/mmab/$L.so.xz
  echo "=== $L" | tee -a $OUT/probe.log
  MYNS_LIBRARY=$PWD/build/mmab/$L.so timeout 150 python3 bench/explore/matmul_kernel_times.py --calls 20 --set pipe --variants ${VARIANTS:-wg64,wg128,wg192c1,wg256c1} 2>&1 | grep -v -i warn >> $OUT/probe.log
done
grep -v "^   " $OUT/probe.log
