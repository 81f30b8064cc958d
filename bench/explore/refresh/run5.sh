#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT), 2026-12-02: forced
# schedules beside the plan, do_bench ratios to cuBLAS (cliff-hunt/sweep.py),
# every result checked against float64.
#  narrow: the one-wave mid-size products on 64-row tiles (wgh128: 64 x 128,
#          one m64n128 wgmma chain a tile) and on 128-row ping-pong tiles
#          (wgp64: one consumer takes a whole 128 x 64 tile, as cuBLAS's
#          128x64 kernel is thought to);
#  prefill: long-K prefill products over four or fewer rows of tiles, in K
#          ranges (split K, `/2`; a K cluster, `k2`).
#   bash bench/explore/refresh/run5.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S="512,512,512;1024,1024,1024;1024,2048,1024;2048,1024,1024;1000,1000,1000;1024,1024,2048;1280,2048,1024;768,2048,2048"
for l in kn nk; do
  timeout 200 python3 bench/explore/cliff-hunt/sweep.py --layout $l --shapes "$S" --variants wg64,wgh128,wgh64,wgp64,wgp128,wg128 > $OUT/narrow-$l.md 2>&1
done
S="512,18944,3584;384,18944,3584;256,18944,3584;512,14336,4096;512,11008,4096;512,8192,3584"
timeout 400 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S" --variants wg96,wg112,wg128/2,wg192/2,wg256/2,wg128k2,wg192k2,wg144/2,wg160/2 > $OUT/prefill-nk.md 2>&1
grep -hv "^<!--" $OUT/*.md
