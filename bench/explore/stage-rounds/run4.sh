#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): 160-wide tiles in two waves
# against 320-wide ones in one at four rows of tiles against 10240 columns
# (where the refitted `wave_eff` would move the plan), and the `WGQ` widths
# in float16 on products the plan gives them.
#   bash bench/explore/stage-rounds/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 150 python3 $S --shapes "512,8192,10240;448,8192,10240;512,4096,10240;416,3072,10240" --variants wg160,wg320,wg192 > $OUT/n10240-nk.md 2>&1
timeout 150 python3 $S --dtype f16 --shapes "256,3072,9216;512,3584,4608;256,8192,10240;256,4096,11008;512,4096,11008;512,18944,3584" --variants wg112,wg144,wg160,wg176,wg192 > $OUT/f16-nk.md 2>&1
cat $OUT/n10240-nk.md $OUT/f16-nk.md
