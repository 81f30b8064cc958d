#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): products where the cost
# model with the 128 x 320 tile among its candidates (efficiency 0.95)
# would take it over two waves or more (not wg320_wave's one): the 320 tile
# against the bundle's automatic plan and the 256-wide tile single.
#   bash bench/explore/wide320/model.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
M="640,4096,8192;640,4096,16384;768,4096,6144;768,4096,13824;896,4096,11008;1024,4096,10240;1152,4096,9216;1280,4096,8192;1536,4096,3072;1920,4096,5120;2048,4096,5120;2304,4096,2048;2560,4096,4096;3200,4096,8192;4096,4096,2560;1024,8192,10240;2048,5120,5120;768,5120,13824"
timeout 200 python3 $S --shapes "$M" --variants wg320,wg256c1 > $OUT/model-nk.md 2>&1
timeout 100 python3 $S --layout kn --shapes "1024,8192,10240;2048,5120,5120;768,5120,13824;1024,4096,10240;2560,4096,4096" --variants wg320,wg256c1 > $OUT/model-kn.md 2>&1
cat $OUT/model-nk.md $OUT/model-kn.md
