#!/bin/bash
# Device run (bundle in .gpu/: libmyns.so.xz the build under test, base.so.xz
# the library before it; results in $OUT): the Hopper matmul tests with the
# new library, then each library in turn, ROUNDS rounds (one process per
# library and round; ratios to cuBLAS measured in that process): the
# cooperative widths 128 to 192 forced, and the plan, on the products
# `wg_waves` gives them (nn.Linear's layout), and the plan on a set of other
# products (row-major B).
#   bash bench/explore/stage-rounds/ab2.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/base.so ] || xz -dk .gpu/base.so.xz
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "one_wave or hopper_variants or unaligned_output or accumulate" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
W=${W:-"256,3072,9216;512,3584,4608;512,3072,9216;384,4096,12288;512,18944,3584;512,3584,3584;384,3584,4608;256,8192,10240;256,4096,11008;512,4096,11008;384,3584,14336;256,4096,6144"}
V=${V:-wg128,wg144,wg160,wg176,wg192}
G=${G:-"1000,1000,1000;1024,1024,1024;2048,2048,2048;3000,1000,2000;4096,4096,4088;4096,4096,4096;8192,8192,8192;2048,4096,32000;4096,1024,4096;768,4096,1024"}
for r in $(seq ${ROUNDS:-3}); do
  for lib in base libmyns; do
    echo "## $lib round $r"
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout ${W_S:-140} python3 $S --rounds 1 --shapes "$W" --variants $V 2>&1 | grep -v Warn
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout ${G_S:-60} python3 $S --rounds 1 --shapes "$G" --layout kn 2>&1 | grep -v Warn
  done
done | tee $OUT/ab2.md
