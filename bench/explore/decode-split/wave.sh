#!/usr/bin/env bash
# Device run after one wave of 64 x 128 tiles became the plan at 33-128 rows
# (plan.rs `wgh_wave`; library in .gpu/): split.py's `wave2` (the plan
# against the streaming build and 128-row tiles), then test-gpu, then the
# matmul report (to $OUT/mm.tgz) with whatever time is left.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/wave-out}; mkdir -p "$OUT/wave2"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
timeout 60 python3 bench/explore/decode-split/split.py --rounds 3 --set wave2 --out $OUT/wave2 > $OUT/wave2.txt 2>&1; echo "wave2 rc $?"
OUT=$OUT timeout 470 bash scripts/gpu_run.sh test-gpu > $OUT/test-gpu.out 2>&1; echo "test-gpu rc $?"
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 70 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "MYNS_LIBRARY=.gpu/libmyns.so python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
