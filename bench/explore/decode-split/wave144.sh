#!/usr/bin/env bash
# Device run (library in .gpu/): `make test-gpu` (scripts/gpu_run.sh), then
# split.py's set wave144; the set's output packed into $OUT/wave144.tgz.
set -uo pipefail
OUT=${OUT:-/tmp/wave144-out}; mkdir -p "$OUT/r/wave144"
OUT=$OUT timeout 520 bash scripts/gpu_run.sh test-gpu
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 60 python3 bench/explore/decode-split/split.py --rounds 3 --set wave144 --out $OUT/r/wave144 > $OUT/r/wave144.txt 2>&1; echo "wave144 rc $?"
grep -E "^(bf16|f16)|^ +(torch|auto|wgh)" $OUT/r/wave144.txt | sed 's/err\/bound \([0-9.]*\).*clean rounds/eb \1 | rounds/'
(cd $OUT && tar czf wave144.tgz r && rm -rf r)
