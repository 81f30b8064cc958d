#!/bin/bash
# Device run: the narrow tiles' products on forced pairs (n2: side by side
# sharing A; c2: one above the other sharing B), the library before the
# two loaders (.gpu/) and with them (.gpu/alt/), one round each.
#   bash bench/explore/loop-stalls/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/alt/libmyns.so ] || xz -dk .gpu/alt/libmyns.so.xz
for lib in base alt; do
  if [ $lib = base ]; then L=.gpu/libmyns.so; else L=.gpu/alt/libmyns.so; fi
  MYNS_LIBRARY=$PWD/$L timeout 200 python3 bench/explore/matmul_kernel_times.py --set loaders2 --variants ${V:-wg64,wg64n2,wg64c2,wg96,wg96c2,wg128,wg128n2,wg128c2} > $OUT/kt-$lib-1.log 2>&1
  echo "$lib rc $?"
done
python3 bench/explore/kgroup/summarize.py $OUT | tee $OUT/summary.md
