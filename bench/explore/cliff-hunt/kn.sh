#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the sweep with row-major
# [K, N] weights at 17 to 512 rows; forced plans where nn.Linear's weights
# take 64 x 144 tiles (row-major ones cannot), and at 256 rows against
# 2048 to 5120 columns.
#   bash bench/explore/cliff-hunt/kn.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 200 python3 $S --layout kn --ms 17,32,48,64,96,128,256,512 > $OUT/sweep-kn.md 2>&1
timeout 100 python3 $S --layout kn --shapes "32,3584,18944;24,3584,18944;96,3072,9216;128,3072,9216;256,3584,4608" --variants wgh128,wgh64,wg128,wg192c1,wg64,skinny_tma > $OUT/variants-kn.md 2>&1
timeout 100 python3 $S --shapes "256,3584,3584;256,4096,4096;256,4096,2048;256,8192,3072;256,4096,5120;192,3584,3584;384,3584,3584" --variants wg64,wg128,wg128k2,wg64k2,wgh64,wgh128 > $OUT/variants-256.md 2>&1
cat $OUT/variants-kn.md $OUT/variants-256.md; awk -F'|' '$6+0 < 0.9' $OUT/sweep-kn.md
