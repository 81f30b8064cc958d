#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): L2 traffic of one wave of
# 128 x 128 tiles, 2000 x 4096 x N, b row-major: N = 1000 (b's k-lines of
# 2000 bytes, off 16 bytes from a 32-byte sector), 1008 (2016 bytes: off
# 128 but 32-byte aligned), 1024 (aligned), unpaired (wg128c1); N = 1000
# also in pairs sharing B (wg128c2). ncu, caches flushed, locked clocks.
#   bash bench/explore/ragged/ncu-lines.sh
set -u
source bench/explore/tf32-llm/env.sh
M="gpu__time_duration.sum,lts__t_requests.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
for run in "1000 wg128c1" "1008 wg128c1" "1024 wg128c1" "1000 wg128c2"; do
  set -- $run
  echo "## $2 2000 x 4096 x $1 bf16 kn"
  MYNS_MATMUL_KERNEL=$2 timeout 90 ncu --launch-skip 2 --launch-count 1 -k "regex:mm_wg" --metrics "$M" \
    python3 bench/explore/ncu_matmul.py myns 2000 4096 $1 bf16 1 kn 2>&1 | grep -vE "^==PROF==|^\[" | tail -10
done | tee $OUT/ncu-lines.txt
