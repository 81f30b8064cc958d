#!/usr/bin/env bash
# Device run after the 64-row tiles' cost per K range was halved (plan.rs
# `wg_cost`; library in .gpu/): the matmul report (to $OUT/mm.tgz), then
# split.py's `wghfix` (the new plan against the old, where it moved),
# `tiles64` (the plan against 64-row tiles split 2-4 ways) and `midm`
# (24-96 rows).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/wghfix-out}; mkdir -p "$OUT"
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 150 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "MYNS_LIBRARY=.gpu/libmyns.so python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
for set in wghfix tiles64 midm; do
  mkdir -p $OUT/$set; timeout 200 python3 bench/explore/decode-split/split.py --rounds 3 --set $set --out $OUT/$set > $OUT/$set.txt 2>&1; echo "$set rc $?"
done
