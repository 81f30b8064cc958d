#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the one-wave squares with
# the output stored from registers beside the TMA-store epilogue, and all
# of it again with the operands left in L2 (no flush between calls).
#   bash bench/explore/refresh/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
for l2 in flushed warm; do
  extra=""; [ $l2 = warm ] && extra="--warm-l2"
  timeout 120 python3 bench/explore/matmul_kernel_times.py --set kc1024 --calls 40 --store-off $extra > $OUT/kt-store-$l2.log 2>&1
  echo "== L2 $l2"; grep "per call" $OUT/kt-store-$l2.log
done
