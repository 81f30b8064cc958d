#!/usr/bin/env bash
# Device run (library in .gpu/): sets longk2 and rows32k of split.py,
# packed into $OUT/longk2.tgz.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/longk2-out}; mkdir -p "$OUT/r"
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
for SET in longk2 rows32k; do
  timeout 200 python3 bench/explore/decode-split/split.py --rounds 3 --set $SET --out $OUT/r/$SET > $OUT/r/$SET.txt 2>&1; echo "$SET rc $?"
done
(cd $OUT && tar czf longk2.tgz r && rm -rf r)
