#!/bin/bash
# Device run: pairs leaving without the end cluster barrier (the A loader
# waits for the last stages' releases instead). Library before (.gpu/) and
# after (.gpu/alt/): kernel times alternating (two rounds of set loaders2
# with the pair variants, one of set loaders); then, with the new library,
# the Hopper matmul and bmm tests beside compute-sanitizer memcheck and
# racecheck over every pair variant.
#   bash bench/explore/pair-cost/run2.sh
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/alt/libmyns.so ] || xz -dk .gpu/alt/libmyns.so.xz
ALT=$PWD/.gpu/alt/libmyns.so
for r in 1 2; do
  for lib in base alt; do
    if [ $lib = base ]; then L=$PWD/.gpu/libmyns.so; else L=$ALT; fi
    MYNS_LIBRARY=$L timeout 150 python3 bench/explore/matmul_kernel_times.py --set loaders2 --variants wg64,wg64n2,wg64c2,wg96c2,wg128n2 > $OUT/kt-$lib-$r.log 2>&1
    echo "kt $lib round $r rc $?"
  done
done
for lib in base alt; do
  if [ $lib = base ]; then L=$PWD/.gpu/libmyns.so; else L=$ALT; fi
  MYNS_LIBRARY=$L timeout 150 python3 bench/explore/matmul_kernel_times.py --set loaders > $OUT/kt-$lib-3.log 2>&1
  echo "kt $lib set loaders rc $?"
done
python3 bench/explore/kgroup/summarize.py $OUT base alt > $OUT/summary.md
export MYNS_LIBRARY=$ALT
for tool in memcheck racecheck; do
  ( timeout -k 10 280 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/explore/pair-cost/sanitize_pairs.py > $OUT/sanitize-$tool.log 2>&1; echo "$tool rc $?" >> $OUT/sanitize-$tool.log ) &
done
timeout -k 10 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
wait
tail -3 $OUT/sanitize-*.log
