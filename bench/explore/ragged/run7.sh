#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the plan against the plan
# it replaced on 34 products drawn at random (three per kind of change,
# seed 7) from those whose plan changed and runs 3 to 6 did not time
# (verify-4.txt).   bash bench/explore/ragged/run7.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 250 python3 bench/explore/ragged/verify.py bench/explore/ragged/verify-4.txt --rounds 5 > $OUT/verify-4.md 2>&1
echo "verify rc $?"
cat $OUT/verify-4.md
