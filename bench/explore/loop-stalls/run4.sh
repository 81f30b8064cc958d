#!/bin/bash
# Device run: the library before the two loaders (.gpu/, base), with them
# and warp 1 setting up the barriers (.gpu/alt/, run 2's), and with warp 2
# setting them up so that thread 32 works out its first item at once
# (.gpu/alt2/). alt2's Hopper matmul tests, then kernel times of the
# `loaders` set, the three alternating over two rounds.
#   bash bench/explore/loop-stalls/run4.sh
set -u
source bench/explore/tf32-llm/env.sh
for d in alt alt2; do [ -f .gpu/$d/libmyns.so ] || xz -dk .gpu/$d/libmyns.so.xz; done
MYNS_LIBRARY=$PWD/.gpu/alt2/libmyns.so MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_matmul_kernels.py -k "hopper_variants or one_wave or wave_tiles or accumulate or edge_cases or unaligned_output or zero_sizes" > $OUT/pytest-alt2.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest-alt2.log
for r in 1 2; do
  for lib in base alt alt2; do
    if [ $lib = base ]; then L=.gpu/libmyns.so; else L=.gpu/$lib/libmyns.so; fi
    MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-120} python3 bench/explore/matmul_kernel_times.py --set loaders > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT base alt2 | tee $OUT/summary-alt2.md
python3 bench/explore/kgroup/summarize.py $OUT alt alt2 > $OUT/summary-alt-alt2.md
