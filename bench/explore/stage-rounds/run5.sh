#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): products of two rows of
# 128-row tiles whose widths make half a wave or less (K long: split K
# territory; cuBLAS runs 256 x 18944 x 3584 on 112-wide tiles in two K
# ranges), the plan against split and K-cluster forms of several widths.
#   bash bench/explore/stage-rounds/run5.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
timeout 200 python3 $S --shapes "256,18944,3584;256,8192,3072;256,14336,4096;384,18944,3584;256,28672,8192" --variants wg96/2,wg112/2,wg128/2,wg144/2,wg192/2,wg192/3,wg128k2,wg64k2,wgh128,wgh128/2 > $OUT/halfwave-nk.md 2>&1
cat $OUT/halfwave-nk.md
