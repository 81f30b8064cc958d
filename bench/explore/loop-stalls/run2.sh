#!/bin/bash
# Device run: the library with the A and B loaders in two threads
# (.gpu/alt/) against the library before it (.gpu/). The alt library's
# Hopper matmul tests first, then kernel times (profiler, L2 flushed) of
# the `loaders` set, the libraries alternating over two rounds, then ncu's
# per-instruction samples of the alt library at 1024 x 2048 x 1024.
#   bash bench/explore/loop-stalls/run2.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/alt/libmyns.so ] || xz -dk .gpu/alt/libmyns.so.xz
MYNS_LIBRARY=$PWD/.gpu/alt/libmyns.so MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_matmul_kernels.py -k "hopper_variants or one_wave or wave_tiles or accumulate or edge_cases or unaligned_output or zero_sizes" > $OUT/pytest-alt.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest-alt.log
for r in 1 2; do
  for lib in base alt; do
    if [ $lib = base ]; then L=.gpu/libmyns.so; else L=.gpu/alt/libmyns.so; fi
    MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-120} python3 bench/explore/matmul_kernel_times.py --set loaders > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT | tee $OUT/summary.md
MYNS_LIBRARY=$PWD/.gpu/alt/libmyns.so timeout 120 ncu --cache-control none --clock-control none --launch-skip 2 --launch-count 1 -k "regex:mm_wg" \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o $OUT/alt-ncu \
  python3 bench/explore/ncu_matmul.py myns 1024 2048 1024 bf16 1 kn > /dev/null 2>&1
ncu -i $OUT/alt-ncu.ncu-rep --page source --csv --print-source sass > $OUT/alt-1024-2048-1024-sass.csv 2>&1
rm -f $OUT/alt-ncu.ncu-rep
