#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the final pairs rule
# (A's lines off 32 bytes too below 90% of a wave) on verify-5.txt, then
# the matmul report (with the ragged row 1280 x 3000 x 1536 nk).
#   bash bench/explore/ragged/run11.sh
set -u
bash bench/explore/ragged/verify.sh 5 5 120
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 250 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/ragged/run11.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
echo "report rc $?"
grep -A14 "by class" $OUT/mm/*.md
grep "| ragged" $OUT/mm/*.md
