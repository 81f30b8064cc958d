#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): why the 128 x 64 tile's
# main loop runs slower than cuBLAS's: ncu's stall reasons per issued
# instruction, tensor pipe and shared-memory activity, ours against
# cuBLAS's, 1024 x 2048 x 1024 (32 k-tiles a block) and 1024³, operands
# left in L2 (--cache-control none) at the machine's own clocks.
#   bash bench/explore/refresh/ncu-stalls.sh
set -u
source bench/explore/tf32-llm/env.sh
M="gpu__time_duration.sum,sm__cycles_active.avg,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for shape in "1024 2048 1024" "1024 1024 1024"; do
  for who in myns torch; do
    echo "## $who $shape bf16 kn"
    timeout 90 ncu --cache-control none --clock-control none --launch-skip 2 --launch-count 1 -k "regex:mm_wg|nvjet" --metrics "$M" \
      python3 bench/explore/ncu_matmul.py $who $shape bf16 1 kn 2>&1 | grep -vE "^==PROF==|^\[" | awk '$NF != "0" && $NF != "0.00"'
  done
done | tee $OUT/ncu-stalls.txt
