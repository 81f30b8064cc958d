#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT) after the second plan
# change (`wg64_wave`; 64 x 128 tiles over one wave at most from 65 rows):
# the decode and wave-tile tests on CUDA, then the sweep at 96 to 256 rows
# with both weight layouts and the 256-row shapes of variants-256.
#   bash bench/explore/cliff-hunt/verify2.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "decode_streaming or wave_tiles" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest.log
timeout 60 python3 $S --shapes "256,3584,3584;256,4096,4096;256,4096,2048;256,8192,3072;256,4096,5120;192,3584,3584;384,3584,3584" > $OUT/verify-256.md 2>&1
timeout 90 python3 $S --layout kn --ms 96,128,256 > $OUT/sweep-kn.md 2>&1
timeout 90 python3 $S --ms 96,128,256 > $OUT/sweep-nk.md 2>&1
cat $OUT/verify-256.md; awk -F'|' '$6+0 < 0.9' $OUT/sweep-kn.md $OUT/sweep-nk.md
