#!/bin/bash
# Device run (bundle in .gpu/, the probe library of trace.patch in
# .gpu/trace/; results in $OUT): per-block traces of single blocks against
# pairs on the narrow tiles, with the consumers releasing a stage once per
# warp (MYNS_EXP=0, as main) or once per warpgroup (MYNS_EXP=1); then
# kernel times of the same, alternating.
#   bash bench/explore/pair-cost/run1.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/trace/libmyns.so ] || xz -dk .gpu/trace/libmyns.so.xz
export MYNS_LIBRARY=$PWD/.gpu/trace/libmyns.so
for e in 0 1; do
  MYNS_EXP=$e timeout 150 python3 bench/explore/pair-cost/trace.py > $OUT/trace-exp$e.log 2>&1
  echo "trace exp $e rc $?"
done
for r in 1 2; do
  for e in 0 1; do
    MYNS_EXP=$e timeout 150 python3 bench/explore/matmul_kernel_times.py --set loaders2 --variants ${V:-wg64,wg64n2,wg64c2,wg96,wg96c2,wg128n2} > $OUT/kt-exp$e-$r.log 2>&1
    echo "kt exp $e round $r rc $?"
  done
done
python3 bench/explore/kgroup/summarize.py $OUT exp0 exp1 | tee $OUT/summary.md
