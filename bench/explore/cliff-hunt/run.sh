#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the matmul report at the
# bundle's commit, then the cliff-hunt sweep over other LLM weights.
#   bash bench/explore/cliff-hunt/run.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout ${REPORT_S:-150} python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/cliff-hunt/run.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
timeout ${SWEEP_S:-300} python3 bench/explore/cliff-hunt/sweep.py ${SWEEP_ARGS:-} > $OUT/sweep.md 2> $OUT/sweep.err
tail -3 $OUT/report.log; cat $OUT/sweep.md
