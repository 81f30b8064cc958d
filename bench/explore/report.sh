#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the matmul report, its
# `command` line naming the run script that calls it (ragged/run5.sh,
# ragged/run11.sh, stage-rounds/report.sh).
#   bash bench/explore/report.sh bench/explore/<folder>/<script>
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 250 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash $1 (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
echo "report rc $?"
grep -A14 "by class" $OUT/mm/*.md
grep "| ragged" $OUT/mm/*.md
