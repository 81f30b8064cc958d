#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): verify.py on verify-N.txt,
# the plan against the plans it replaced; run3.sh, run5.sh to run7.sh call it.
#   bash bench/explore/ragged/verify.sh N ROUNDS TIMEOUT_S
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout $3 python3 bench/explore/ragged/verify.py bench/explore/ragged/verify-$1.txt --rounds $2 > $OUT/verify-$1.md 2>&1
echo "verify rc $?"
cat $OUT/verify-$1.md
