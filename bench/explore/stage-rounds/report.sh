#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the matmul report, its
# `prefill` class with the two half-wave products split in two K ranges.
#   bash bench/explore/stage-rounds/report.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 250 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/stage-rounds/report.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
echo "report rc $?"
grep -A14 "by class" $OUT/mm/*.md
