#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): pairs sharing B on the
# products whose plan the 32-byte rule changed or kept (verify-2.txt),
# then the matmul report (with its new ragged rows).
#   bash bench/explore/ragged/run5.sh
set -u
bash bench/explore/ragged/verify.sh 2 5 120
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 250 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/ragged/run5.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
echo "report rc $?"
grep -A14 "by class" $OUT/mm/*.md
grep "| ragged" $OUT/mm/*.md
