#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the fractional-wave
# products still below 0.9 of cuBLAS. What cuBLAS launches there (probe.py),
# then every existing tile forced against the plan (sweep.py).
#   bash bench/explore/mid-waves/run.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
W="256,3072,9216;512,3584,4608;96,8192,3072;128,3584,4608;256,18944,3584;96,4096,6144;512,3072,9216;256,4096,6144;512,8192,3072;96,3584,3584;256,8192,3072;512,18944,3584;128,28672,8192;512,11008,4096;256,4096,11008"
timeout ${P_S:-120} python3 bench/explore/mid-waves/probe.py --shapes "$W" > $OUT/probe-nk.txt 2>&1
timeout ${P_S:-60} python3 bench/explore/mid-waves/probe.py --layout kn --shapes "256,3072,9216;512,3584,4608;512,11008,4096" > $OUT/probe-kn.txt 2>&1
timeout ${V_S:-240} python3 $S --shapes "$W" --variants wg320,wg256,wg192,wg192c1,wg128,wgp128,wgh144,wgh128,wg192/2,wg128/2 > $OUT/variants-nk.md 2>&1
cat $OUT/probe-nk.txt $OUT/probe-kn.txt $OUT/variants-nk.md
