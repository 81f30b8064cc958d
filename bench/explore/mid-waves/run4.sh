#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): plan.rs `wg_waves` (the
# width of least waves x width / wave_eff) against forced widths where it
# chose between close candidates, then the plan over 256 to 512 rows
# against every sweep weight, both B layouts.
#   bash bench/explore/mid-waves/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
W="384,3072,9216;448,3584,9000;512,3072,9216;384,4096,11008;384,4096,14336;256,3584,14336;512,4096,14336;384,3584,4608;384,8192,3072"
timeout ${W_S:-200} python3 $S --shapes "$W" --variants wg112,wg128,wg144,wg176,wg192,wg256c1,wg256c2,wg320 > $OUT/choices-nk.md 2>&1
timeout ${A_S:-150} python3 $S --ms 256,384,512 > $OUT/auto-nk.md 2>&1
timeout ${A_S:-150} python3 $S --ms 256,384,512 --layout kn > $OUT/auto-kn.md 2>&1
cat $OUT/choices-nk.md $OUT/auto-nk.md $OUT/auto-kn.md
