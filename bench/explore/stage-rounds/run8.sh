#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): 256 to 512 rows against
# weights whose tiles make more than two waves of every width (the plan's
# model decides there): the widths forced, single blocks and pairs.
#   bash bench/explore/stage-rounds/run8.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 250 python3 $S --shapes "320,8192,28672;448,4096,22016;512,4096,22016;512,5120,27648;384,4096,32000;512,4096,32000;256,4096,50257;512,4096,50257;448,4096,24576;416,4096,28672" --variants wg160,wg176,wg192,wg256c1,wg256c2,wg320 > $OUT/manywaves-nk.md 2>&1
cat $OUT/manywaves-nk.md
