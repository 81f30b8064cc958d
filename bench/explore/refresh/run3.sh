#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): one-wave squares on 128 x
# 64 tiles (the plan) against 128 x 128 tiles in two or four K ranges of a
# cluster, 64-row tiles in K ranges, and pairs; kernel times, two rounds.
#   bash bench/explore/refresh/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
for r in 1 2; do
  timeout 140 python3 bench/explore/matmul_kernel_times.py --set kc1024 --calls 40 \
    --variants wg64,wg128k2,wg128k4,wg64k2,wg192k2,wgh128k2,wg64c2 > $OUT/kt-kc1024-$r.log 2>&1
  grep "per call" $OUT/kt-kc1024-$r.log
done
