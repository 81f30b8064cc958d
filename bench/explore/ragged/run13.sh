#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): is run 12's miss (nine
# rows of 96-wide tiles against 1280 columns slower than 112-wide ones) a
# matter of how full the wave is or of the last column tile's remainder?
# M 896 to 1280 (7 to 10 rows) against N = 1152, 1280, 1344 (1280 and 1344
# make the same tile counts at 96 and 112 wide, 1344 with no remainder) and
# 1536, K 2048 and 4096, nn.Linear's weight: the plan beside 96-, 112- and
# 128-wide tiles. do_bench ratios (cliff-hunt/sweep.py), checked against
# float64.
#   bash bench/explore/ragged/run13.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=""
for k in 4096 2048; do
  for m in 896 1024 1152 1280; do
    for n in 1152 1280 1344 1536; do S="$S;$m,$k,$n"; done
  done
done
timeout 500 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "${S#;}" --variants wg96,wg112,wg128 > $OUT/fill-nk.md 2>&1
echo "rc $?"
grep -v "^<!--" $OUT/fill-nk.md
