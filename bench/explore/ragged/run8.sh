#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the two leads run 7 left.
# (1) the width rule (`plan::wg_waves`, five to sixteen rows) where A's rows
# are off 128 bytes or K is under 2048, nn.Linear's weight: the plan beside
# every width it could take and pairs sharing A; (2) one wave of 128 x 64
# tiles against the 64-row ping-pong tiles, one tile a block. do_bench
# ratios (cliff-hunt/sweep.py), every result checked against float64.
#   bash bench/explore/ragged/run8.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=""
for m in 768 1100 1280 1536 2000; do
  for k in 1000 2000 3000; do
    for n in 1000 1536; do S="$S;$m,$k,$n"; done
  done
done
S="${S#;};1100,4096,1536;1100,4096,1280;1100,3072,1536;1280,1536,1024;1100,1024,1536"
timeout 330 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg64,wg64n2 > $OUT/widths-nk.md 2>&1
echo "widths rc $?"
S2="512,512,512;1024,1024,1024;1024,2048,1024;2048,1024,1024;768,2048,1024;1000,1000,1000"
for lay in kn nk; do
  timeout 60 python3 bench/explore/cliff-hunt/sweep.py --layout $lay --shapes "$S2" --variants wg64,wgh128,wgh64,wg128 > $OUT/half-$lay.md 2>&1
  echo "half $lay rc $?"
done
cat $OUT/widths-nk.md $OUT/half-kn.md $OUT/half-nk.md | grep -v "^<!--"
