#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): (1) where one wave of 128 x
# 320 tiles replaces more than a wave of 256-wide ones (plan.rs rule to
# be), the 320 tile against the others, both B layouts; (2) the 256-wide
# tile single against in pairs on large products (the report's square and
# Llama shapes, both B layouts), 5 rounds.
#   bash bench/explore/wide320/pairs.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
W="512,3072,9216;512,8192,10240;384,4096,12288;512,4096,10240;448,3584,9000;512,2048,10240;256,4096,20480;512,14336,9216"
for lay in nk kn; do
  timeout 120 python3 $S --layout $lay --shapes "$W" --variants wg320,wg192,wg256,wg128 > $OUT/w-$lay.md 2>&1
done
L="2048,2048,2048;4096,4096,4096;8192,8192,8192;4096,4096,14336;4096,14336,4096;8192,4096,14336;8192,14336,4096;4096,4096,1024;8192,4096,4096;2048,4096,32000;4096,4096,4088"
for lay in kn nk; do
  timeout 180 python3 $S --rounds 5 --layout $lay --shapes "$L" --variants wg256c1,wg256c2 > $OUT/p-$lay.md 2>&1
done
cat $OUT/w-*.md $OUT/p-*.md
