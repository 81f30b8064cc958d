#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): where the plan sums K
# ranges in a cluster (wg64k2, wg128k2, wg192k2) or runs 128 x 128 tiles
# unsplit over many rows, the plan beside unsplit tiles and pairs; do_bench
# ratios to cuBLAS (cliff-hunt/sweep.py), every result checked against
# float64.   bash bench/explore/ragged/run2.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S="768,2048,2048;1024,4096,1536;1280,2048,1024;2048,4096,768;1100,3000,1100;640,3000,2000;1000,2000,1280;512,4096,3000"
S="$S;512,4096,2048;640,2000,1000;1024,3072,1024;1024,4096,1024;1536,4096,512;768,4096,768;1000,3000,600"
S="$S;512,4096,512;1024,2000,512;384,4096,1024;768,2000,600"
S="$S;2048,2048,1024;2048,1024,1024;2000,3000,1000;1536,2048,1024;3000,2000,600;1280,2048,1280;2048,4096,1000"
V=wg64,wg64n2,wg128,wg128c2,wg128n2,wg192c1,wg64k2,wg128k2,wg192k2
timeout 280 python3 bench/explore/cliff-hunt/sweep.py --layout kn --shapes "$S" --variants $V > $OUT/k2-kn.md 2>&1
echo "kn rc $?"
timeout 280 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S" --variants $V,wg96,wg112,wg144 > $OUT/k2-nk.md 2>&1
echo "nk rc $?"
cat $OUT/k2-kn.md $OUT/k2-nk.md | grep -v "^<!--"
