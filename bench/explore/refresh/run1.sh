#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the matmul report at the
# bundle's commit, then kernel times of the unaligned products.
#   bash bench/explore/refresh/run1.sh
set -u
bash bench/explore/stage-rounds/report.sh
source bench/explore/tf32-llm/env.sh
for s in unaligned tf32u; do
  timeout 100 python3 bench/explore/matmul_kernel_times.py --set $s --calls 30 > $OUT/kt-$s.log 2>&1
  grep "per call" $OUT/kt-$s.log
done
