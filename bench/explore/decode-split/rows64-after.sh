#!/usr/bin/env bash
# Device run after 33-64 rows moved to the streaming build (f1f19ed; library in .gpu/):
# the matmul report (to $OUT/mm.tgz), split.py sets midm (24-96 rows, the plan) and tf32 (M <= 16 decode,
# after the TF32 K-major consumer began loading a chunk at a time).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 240 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "MYNS_LIBRARY=.gpu/libmyns.so python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
for set in midm tf32; do
  mkdir -p $OUT/$set; timeout 150 python3 bench/explore/decode-split/split.py --rounds 3 --set $set --out $OUT/$set > $OUT/$set.txt 2>&1; echo "$set rc $?"
done
