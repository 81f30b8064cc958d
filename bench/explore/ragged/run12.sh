#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the width rule's miss of
# run 8 (1100 x 4096 x 1280 nk: 96-wide tiles 0.71, 112-wide 0.81) over M
# of 1024 to 1280, N 1280 and 1536, K 3072 and 4096, nn.Linear's weight:
# the plan beside the 96- to 144-wide tiles. do_bench ratios
# (cliff-hunt/sweep.py), every result checked against float64.
#   bash bench/explore/ragged/run12.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=""
for m in 1024 1100 1152 1200 1280; do
  for n in 1280 1536; do
    for k in 3072 4096; do S="$S;$m,$k,$n"; done
  done
done
timeout 250 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "${S#;}" --variants wg96,wg112,wg128,wg144 > $OUT/widths2-nk.md 2>&1
echo "rc $?"
grep -v "^<!--" $OUT/widths2-nk.md
