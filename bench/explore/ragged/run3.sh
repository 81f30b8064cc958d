#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the new plan against the
# plan it replaced, on products whose plan changed (verify-1.txt).
#   bash bench/explore/ragged/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 300 python3 bench/explore/ragged/verify.py bench/explore/ragged/verify-1.txt --rounds 5 > $OUT/verify-1.md 2>&1
echo "verify rc $?"
cat $OUT/verify-1.md
