#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): where the unaligned
# output's extra time goes. ncu on the product's one kernel, an output with
# rows off 16 bytes against its aligned neighbour (nn.Linear's weight, so
# no operand copy): DRAM bytes read and written, L2 sectors written, and
# the time.
#   bash bench/explore/tma-rows/ncu.sh
set -u
source bench/explore/tf32-llm/env.sh
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_write.sum"
for n in 32000 32001 4096 4095; do
  m=2048; [ $n -lt 10000 ] && m=4096
  echo "## myns ${m}x4096x${n} nk"
  timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:mm_wg --metrics $M python3 bench/explore/ncu_matmul.py myns $m 4096 $n bf16 1 nk 2>&1 | grep -E "mm_wg|duration|bytes|sectors|requests" | grep -v "^==PROF=="
done | tee $OUT/ncu.txt
