#!/bin/bash
# Device run (bundle in .gpu/: libmyns.so.xz the build under test, base.so.xz
# the library before it; results in $OUT): the Hopper matmul tests that
# reach the staged output with the new library, then kernel times of the
# unaligned-output set (matmul_kernel_times.py --set unaligned), each
# library in turn, two rounds.
#   bash bench/explore/tma-rows/ab-epilogue.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/base.so ] || xz -dk .gpu/base.so.xz
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-200} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "unaligned_output or accumulate or hopper_variants or one_wave or wide_tile" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest.log
for r in 1 2; do
  for lib in base libmyns; do
    echo "## $lib round $r"
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout 200 python3 bench/explore/matmul_kernel_times.py --set unaligned --calls 20 2>&1 | grep "kernels"
  done
done | tee $OUT/kt-ab.txt
