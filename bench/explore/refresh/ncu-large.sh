#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): what limits the classes
# still under the targets at the shapes the report times: 4096³
# and 8192 x 4096 x 14336 bf16 (target 1.05x), the prefill 512 x 18944 x
# 3584 and the ragged 1280 x 3000 x 1536 (nn.Linear's weight; target
# 1.0x). ncu, ours against cuBLAS, L2 flushed before each kernel (as
# do_bench), the machine's own clocks.
#   bash bench/explore/refresh/ncu-large.sh
set -u
source bench/explore/tf32-llm/env.sh
M="gpu__time_duration.sum,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed.sum,launch__grid_size,launch__cluster_dim_x,regex:smsp__average_warps_issue_stalled_(long_scoreboard|wait|barrier|branch_resolving|math_pipe_throttle|sleeping|dispatch_stall|no_instruction|selected)_per_issue_active\.ratio"
for shape in "4096 4096 4096 kn" "8192 4096 14336 nk" "512 18944 3584 nk" "1280 3000 1536 nk"; do
  set -- $shape
  for who in myns torch; do
    echo "## $who $1 x $2 x $3 bf16 $4"
    timeout 120 ncu --cache-control all --clock-control none --launch-skip 2 --launch-count 1 -k "regex:mm_wg|nvjet|cutlass|xmma" --metrics "$M" \
      python3 bench/explore/ncu_matmul.py $who $1 $2 $3 bf16 1 $4 2>&1 | grep -vE "^==PROF==|^\[" | awk '$NF != "0" && $NF != "0.00"'
  done
done | tee $OUT/ncu-large.txt
