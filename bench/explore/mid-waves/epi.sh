#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): epi.py on one wave of 128-,
# 192- and 256-wide tiles (and a 320 one).
#   bash bench/explore/mid-waves/epi.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 200 python3 bench/explore/mid-waves/epi.py --shapes "512,11008,4096:wg128;256,8192,8192:wg128;512,4096,6144:wg192;384,4096,11008:wg256c1;256,4096,16384:wg256c1;512,8192,10240:wg320;256,3072,9216:wg144" > $OUT/epi-nk.md 2>&1
cat $OUT/epi-nk.md
