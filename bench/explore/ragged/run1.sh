#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): ragged products (M, N of
# 600 to 3000, K 1000 and 2000) against cuBLAS, the plan beside forced
# tiles and pairs; do_bench ratios (cliff-hunt/sweep.py), every result
# checked against float64.
#   bash bench/explore/ragged/run1.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=""
for mn in 1000,1000 1000,2000 2000,1000 1100,1000 1000,1100 1500,1500 2000,2000 3000,2000 2000,3000 3000,1000 1000,3000 600,2000 2000,600 1500,1000 1000,1500 2500,2500; do
  m=${mn%,*}; n=${mn#*,}
  for k in 1000 2000; do S="$S;$m,$k,$n"; done
done
S=${S#;}
V=wg64,wg64n2,wg128,wg128c2,wg128n2,wg192c1,wg192c2,wg192n2,wg128k2,wg192k2
timeout 400 python3 bench/explore/cliff-hunt/sweep.py --layout kn --shapes "$S" --variants $V > $OUT/ragged-kn.md 2>&1
echo "kn rc $?"
S2="1000,1000,1000;2000,1000,1000;1100,2000,1000;3000,1000,2000;2000,2000,2000;1500,1000,1500;2000,1000,3000;3000,2000,1000"
timeout 150 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S2" --variants $V,wg96,wg112,wgh144 > $OUT/ragged-nk.md 2>&1
echo "nk rc $?"
cat $OUT/ragged-kn.md $OUT/ragged-nk.md | grep -v "^<!--"
