#!/bin/bash
# Device run: the loaders as whole warps (.gpu/warp/, `warp.diff`: warps
# 0 and 1 run the loop converged, one elected lane issuing each expect-tx
# and TMA load through a predicate, so that ptxas keeps the loop's values
# in uniform registers and drops the ELECT/R2UR waterfall around each
# load) against 300b0cf's library (.gpu/, one thread per loader). The
# variant's Hopper matmul tests, then kernel times of the `loaders` and
# `loaders4` sets, the libraries alternating over two rounds.
#   bash bench/explore/loop-stalls/run7.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/warp/libmyns.so ] || xz -dk .gpu/warp/libmyns.so.xz
MYNS_LIBRARY=$PWD/.gpu/warp/libmyns.so MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_matmul_kernels.py -k "hopper_variants or one_wave or wave_tiles or accumulate or edge_cases or unaligned_output or zero_sizes" > $OUT/pytest-warp.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest-warp.log
for r in 1 2; do
  for lib in base warp; do
    if [ $lib = base ]; then L=.gpu/libmyns.so; else L=.gpu/warp/libmyns.so; fi
    { MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-120} python3 bench/explore/matmul_kernel_times.py --set loaders
      MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-120} python3 bench/explore/matmul_kernel_times.py --set loaders4; } > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT base warp | tee $OUT/summary-run7.md
