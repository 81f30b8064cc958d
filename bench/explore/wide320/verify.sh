#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT) after the plan change
# (plan::wg320_wave): the matmul report, then the cliff-hunt sweep over
# LLM weights, nn.Linear's layout, and with a row-major weight at 256 to
# 2048 rows.
#   bash bench/explore/wide320/verify.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 150 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/wide320/verify.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
timeout 200 python3 $S > $OUT/sweep-nk.md 2>&1
timeout 120 python3 $S --layout kn --ms 256,512,1024,2048 > $OUT/sweep-kn.md 2>&1
grep -A12 "by class" $OUT/mm/*.md; cat $OUT/sweep-nk.md $OUT/sweep-kn.md
