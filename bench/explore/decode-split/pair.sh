#!/usr/bin/env bash
# Device run after the plan took a cluster's two K ranges of 64-row tiles
# (plan.rs `wgh_k_cluster`; library in .gpu/): split.py's `pair` set, then the
# matmul report (to $OUT/mm.tgz).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/pair-out}; mkdir -p "$OUT/pair"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
timeout 150 python3 bench/explore/decode-split/split.py --rounds 3 --set pair --out $OUT/pair > $OUT/pair.txt 2>&1; echo "pair rc $?"
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 90 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "MYNS_LIBRARY=.gpu/libmyns.so python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
OUT=$OUT bash bench/explore/decode-split/ncu_kc.sh > $OUT/ncu_kc.txt 2>&1; echo "ncu rc $?"
