#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the Hopper matmul tests,
# TF32 with a row-major b whose rows are off 16 bytes (now copied into
# padded rows for the register-A kernel), and float16 against bfloat16 on
# the same tiles: kernel times and ncu.
#   bash bench/explore/refresh/run2.sh
set -u
source bench/explore/tf32-llm/env.sh
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py \
  -k "unaligned_output or edge_cases or accumulate or hopper_variants or one_wave or wide_tile or large_and_llm" > $OUT/pytest.log 2>&1
tail -3 $OUT/pytest.log
for s in tf32u f16gap; do
  timeout 100 python3 bench/explore/matmul_kernel_times.py --set $s --calls 30 > $OUT/kt-$s.log 2>&1
  grep -v Warn $OUT/kt-$s.log | grep -v _warn_once
done
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats --metrics sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
for kind in bf16 f16; do
  for who in myns torch; do
    timeout 60 ncu --launch-skip 2 --launch-count 1 -k "regex:mm_wg|nvjet|sm90|gemm" $S python3 bench/explore/ncu_matmul.py $who 1024 1024 1024 $kind 1 kn > $OUT/ncu-$kind-$who-1024.txt 2>&1
    grep -E "^  [a-z_]+.*\(|Duration|SM Frequency|Executed Ipc A|Issued Warp|cycles_elapsed.avg.per_second|inst_executed.sum|hmma" $OUT/ncu-$kind-$who-1024.txt | head -12
  done
done
