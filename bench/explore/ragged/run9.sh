#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): products whose A and B
# lines are both off 16 bytes (K = 1000, 3000), 6 to 14 rows of 128-row
# tiles (below `with_shared_b`'s 16), against K = 1008 / 3008 (lines
# 32-byte aligned), both layouts: the plan beside pairs sharing B or A.
#   bash bench/explore/ragged/run9.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=""
for mn in 1280,1536 1024,1536 1280,1280 1536,1280 1792,1024 1024,2048 768,2048 1280,1024; do
  m=${mn%,*}; n=${mn#*,}
  for k in 1000 1008 3000 3008; do S="$S;$m,$k,$n"; done
done
S=${S#;}
for lay in nk kn; do
  timeout 250 python3 bench/explore/cliff-hunt/sweep.py --layout $lay --shapes "$S" --variants wg128,wg128c2,wg128n2,wg64n2,wg192c2 > $OUT/off16-$lay.md 2>&1
  echo "$lay rc $?"
done
cat $OUT/off16-nk.md $OUT/off16-kn.md | grep -v "^<!--"
