#!/bin/bash
# Device run (bundle in .gpu/: libmyns.so.xz the build under test, base.so.xz
# the library before it; results in $OUT): the Hopper matmul tests that
# reach unaligned output rows, then each library in turn (one process per
# library and round) on products whose output rows are off 16 bytes and
# their aligned neighbours, a row-major weight (kn) and nn.Linear's (nk),
# and a few aligned ones as a control.
#   bash bench/explore/tma-rows/ab.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/base.so ] || xz -dk .gpu/base.so.xz
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-200} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "unaligned_output or accumulate or hopper_variants or one_wave or wide_tile" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
KN=${KN:-"4096,4096,4095;4096,4096,4096;2048,4096,1001;1000,1000,1000;1024,1024,1024;512,512,512;3000,1000,2000"}
NK=${NK:-"2048,4096,32001;2048,4096,32000;8192,4096,50257;8192,4096,50256;512,4096,4095;256,4096,11008"}
for r in $(seq ${ROUNDS:-3}); do
  for lib in base libmyns; do
    echo "## $lib round $r"
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout ${W_S:-60} python3 $S --rounds 1 --layout kn --shapes "$KN" 2>&1 | grep -v Warn
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout ${W_S:-60} python3 $S --rounds 1 --layout nk --shapes "$NK" 2>&1 | grep -v Warn
  done
done | tee $OUT/ab.md
