#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): kernel times of one wave
# of 128 x 128 tiles unpaired and in pairs sharing B over 16 rows (set
# `sharedb`), two rounds.   bash bench/explore/ragged/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
for r in 1 2; do
  timeout 200 python3 bench/explore/matmul_kernel_times.py --set sharedb --calls 40 --variants wg128c1,wg128c2 > $OUT/kt-sharedb-$r.log 2>&1
  echo "round $r rc $?"
done
paste <(grep "c1: kernels" $OUT/kt-sharedb-1.log | sed 's/ us per call.*//;s/myns wg128c1: kernels//') <(grep "c2: kernels" $OUT/kt-sharedb-1.log | sed 's/.*kernels//;s/ us per call.*//') <(grep "c1: kernels" $OUT/kt-sharedb-2.log | sed 's/.*kernels//;s/ us per call.*//') <(grep "c2: kernels" $OUT/kt-sharedb-2.log | sed 's/.*kernels//;s/ us per call.*//') <(grep "torch: kernels" $OUT/kt-sharedb-2.log | sed 's/.*kernels//;s/ us per call.*//')
