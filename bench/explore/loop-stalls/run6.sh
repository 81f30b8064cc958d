#!/bin/bash
# Device run: run 5's rows that moved (bmm, TF32 1024³) again, five
# rounds, with bf16 1024³ as the control and bmm 8 x 2048³ beside them;
# the library of 300b0cf (.gpu/, alt2) against 6e0260e's kernel (.gpu/base/).
#   bash bench/explore/loop-stalls/run6.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/base/libmyns.so ] || xz -dk .gpu/base/libmyns.so.xz
for r in 1 2 3 4 5; do
  for lib in base alt2; do
    if [ $lib = alt2 ]; then L=.gpu/libmyns.so; else L=.gpu/base/libmyns.so; fi
    MYNS_LIBRARY=$PWD/$L timeout ${KT_S:-100} python3 bench/explore/matmul_kernel_times.py --set loaders4 > $OUT/kt-$lib-$r.log 2>&1
    echo "$lib round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT base alt2 | tee $OUT/summary-run6.md
