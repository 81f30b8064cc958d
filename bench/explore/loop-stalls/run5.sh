#!/bin/bash
# Device run: were the matmul report's rows that fell at 300b0cf (bmm
# 32 x 512³ and 256 x 128 x 64 x 128, bf16 512³, 64 x 4096 x 4096 nk, ...)
# the two loaders or do_bench's noise? Kernel times (profiler, L2 flushed)
# of the `loaders3` set, the library of 300b0cf (.gpu/, alt2) against the
# one before (.gpu/base/, 6e0260e's kernel), alternating over three rounds.
#   bash bench/explore/loop-stalls/run5.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/base/libmyns.so ] || xz -dk .gpu/base/libmyns.so.xz
for r in 1 2 3; do
  for lib in base alt2; do
    if [ $lib = alt2 ]; then L=.gpu/libmyns.so; else L=.gpu/base/libmyns.so; fi
    MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-100} python3 bench/explore/matmul_kernel_times.py --set loaders3 > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT base alt2 | tee $OUT/summary-run5.md
