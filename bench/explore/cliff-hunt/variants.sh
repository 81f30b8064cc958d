#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the cliffs of the sweep
# (results/sweep-h200-fa6954b.md) against forced plans. Set A: 32 to 96
# rows; set B: 96 to 512 rows, where whole tiles come in fractional waves.
#   bash bench/explore/cliff-hunt/variants.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
A="48,4096,6144;64,4096,6144;48,3584,4608;64,3584,4608;64,4096,8192;64,3584,3584;96,3584,3584;32,3584,18944;32,4096,28672;48,4096,28672;64,4096,28672;64,8192,28672"
timeout 240 python3 $S --shapes "$A" --variants wgh128,wgh64,wgh128k2,wgh64k2,wgh144,wgh128/2,wgh64/2,wg256,wg128,skinny_tma > $OUT/variants-a.md 2>&1
B="96,3072,9216;128,3072,9216;256,3072,9216;512,3072,9216;256,3584,4608;512,3584,4608;128,3584,3584;256,3584,3584;512,3584,3584;256,4096,11008;512,4096,11008;256,18944,3584;512,18944,3584;96,8192,3072;256,8192,3072;512,8192,3072;256,4096,6144;512,4096,6144;256,8192,10240;512,8192,10240"
timeout 330 python3 $S --shapes "$B" --variants wg64,wg128,wg192,wg256,wg128/2,wg192/2,wg256/2,wg128k2,wg192k2,wgh128,wgh144,wg256c2,wg192c1 > $OUT/variants-b.md 2>&1
cat $OUT/variants-a.md $OUT/variants-b.md
