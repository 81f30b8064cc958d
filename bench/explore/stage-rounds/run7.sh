#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): three and four rows of
# tiles against 28672 columns (Llama-3 gate_up), over two waves of every
# width, where the plan runs at 0.83-0.90 of cuBLAS: the widths forced.
#   bash bench/explore/stage-rounds/run7.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 200 python3 $S --shapes "384,8192,28672;384,4096,28672;512,4096,28672;512,8192,28672;384,4096,14336" --variants wg112,wg144,wg160,wg176,wg192,wg256c1,wg256c2,wg320 > $OUT/multiwave-nk.md 2>&1
cat $OUT/multiwave-nk.md
