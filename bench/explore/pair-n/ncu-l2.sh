#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): L2 traffic of the 128 x 64
# tile unpaired (wg64) and in pairs sharing A (wg64n2), 1000^3 (A's rows
# off 128 bytes) against 1024^3, b row-major; ncu, caches flushed.
#   bash bench/explore/pair-n/ncu-l2.sh
set -u
source bench/explore/tf32-llm/env.sh
M="gpu__time_duration.sum,lts__t_requests.sum,lts__t_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
for n in 1000 1024; do
  for v in wg64 wg64n2; do
    echo "## $v ${n}^3 bf16 kn"
    MYNS_MATMUL_KERNEL=$v timeout 90 ncu --launch-skip 2 --launch-count 1 -k "regex:mm_wg" --metrics "$M" \
      python3 bench/explore/ncu_matmul.py myns $n $n $n bf16 1 kn 2>&1 | grep -vE "^==PROF==|^\[" | tail -10
  done
done | tee $OUT/ncu-l2.txt
