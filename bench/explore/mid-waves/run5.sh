#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the `WGQ` widths in pairs
# (B multicast, as cuBLAS's 1x2 clusters) against single blocks on the
# products `wg_waves` gives them, and the three-row products it decided
# between close candidates.
#   bash bench/explore/mid-waves/run5.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
P="256,3072,9216;512,3584,4608;256,4096,6144;512,8192,3072;512,18944,3584;256,8192,10240;256,4096,11008;512,3072,9216"
timeout ${P_S:-200} python3 $S --shapes "$P" --variants wg96,wg96c2,wg112,wg112c2,wg144,wg144c2,wg160,wg160c2,wg176,wg176c2 > $OUT/pairs-nk.md 2>&1
T="384,4096,12288;384,3584,14336;384,3584,4608;384,8192,3072;448,3584,9000;512,4096,11008;512,3584,3584"
timeout ${T_S:-200} python3 $S --shapes "$T" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg192,wg256c1,wg320 > $OUT/three-nk.md 2>&1
cat $OUT/pairs-nk.md $OUT/three-nk.md
