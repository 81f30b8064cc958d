#!/bin/bash
# Device run: a variant library (.gpu/alt/, built with one of
# attempt.diff's knobs on) against the library as it is (.gpu/). The alt
# library's Hopper matmul tests first, then kernel times (profiler, L2
# flushed) of the narrow tiles' products, the libraries alternating over
# two rounds. Run 1: MYNS_WG_KGROUP 2 (two k-tiles a wgmma group on the
# rings of 8 stages or more); run 2 (run2.sh): MYNS_WG_KSTEP_COMMIT 1.
# (The knobs are in attempt.diff, against 8bf7d18.)
#   bash bench/explore/kgroup/run1.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/alt/libmyns.so ] || xz -dk .gpu/alt/libmyns.so.xz
MYNS_LIBRARY=$PWD/.gpu/alt/libmyns.so MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_matmul_kernels.py -k "hopper_variants or one_wave or wave_tiles or accumulate or edge_cases or unaligned_output or zero_sizes" > $OUT/pytest-alt.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest-alt.log
for r in 1 2; do
  for lib in base alt; do
    if [ $lib = base ]; then L=.gpu/libmyns.so; else L=.gpu/alt/libmyns.so; fi
    MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-90} python3 bench/explore/matmul_kernel_times.py --set kgroup --variants ${V:-wg64} > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT | tee $OUT/summary.md
