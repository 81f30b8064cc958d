#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): unsplit 128 x 128 tiles
# against the K ranges they replaced where they fill the fewest SMs (70 to
# 72 tiles; verify-3.txt).   bash bench/explore/ragged/run6.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 200 python3 bench/explore/ragged/verify.py bench/explore/ragged/verify-3.txt --rounds 7 > $OUT/verify-3.md 2>&1
echo "verify rc $?"
cat $OUT/verify-3.md
