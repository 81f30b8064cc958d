#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the plans that take the
# 128 x 320 tile (wg320_wave's one wave, the model's several) in float16,
# whose kernels are the bfloat16 ones' template: the automatic plan against
# the tiles it took before (192 and 256 wide).
#   bash bench/explore/wide320/f16.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
F="512,3072,9216;512,8192,10240;384,4096,12288;1024,8192,10240;2048,5120,5120;2560,4096,4096;768,4096,13824;1024,4096,10240"
for lay in nk kn; do
  timeout 100 python3 $S --dtype f16 --layout $lay --shapes "$F" --variants wg192,wg256,wg256c2 > $OUT/f16-$lay.md 2>&1
done
cat $OUT/f16-*.md
