#!/bin/bash
# Device run (the bundle in .gpu/, results in $OUT): the plan against one
# wave of 64-wide tiles in pairs sharing A (wg64n2) on longer K, A's rows
# off 128 bytes (`--set sharea2`), kernel times, two rounds.
#   bash bench/explore/pair-n/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
for r in 1 2; do
  timeout 120 python3 bench/explore/matmul_kernel_times.py --set sharea2 --calls 40 --variants wg64n2 > $OUT/kt-sharea2-$r.log 2>&1
  grep -E "per call|  mm_" $OUT/kt-sharea2-$r.log | sed 's/ us per call.*//'
done
