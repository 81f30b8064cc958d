#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): every cooperative width
# forced on products of two to four rows of tiles whose widths come in two
# waves or more, against the plan (what would a rule over several waves pick?).
#   bash bench/explore/mid-waves/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
W="512,3072,9216;512,4096,11008;384,4096,11008;512,4096,28672;512,8192,28672;256,3584,14336;256,8192,8192;384,4096,14336;512,4096,14336;256,4096,28672;384,3072,9216"
timeout ${W_S:-300} python3 $S --shapes "$W" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg192,wg256,wg320 > $OUT/waves-nk.md 2>&1
cat $OUT/waves-nk.md
