#!/usr/bin/env bash
# Kernel times (torch.profiler) and ncu at M = 128 with build/mmab/new.so
# (matmul-kernel-times-m128-h100-wgh.log, ncu-h100-wgh64-m128-*.txt).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/new.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
timeout 200 python3 bench/explore/matmul_kernel_times.py --set m128 --variants wgh64,wg64/2 2>&1 | grep -v Warn | tee $OUT/ktimes-m128.log
for who in myns torch; do
  timeout 120 ncu --kernel-name regex:"mm_|nvjet|gemm|sm90" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section LaunchStats --section Occupancy \
    python3 bench/explore/ncu_matmul.py $who 128 4096 4096 bf16 > $OUT/ncu-$who-128.txt 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\)|Grid Size|Block Size|Function|  [a-z_0-9]+.*\(" $OUT/ncu-$who-128.txt | head -20
done
