#!/bin/bash
# Device run (the bundle in .gpu/, results in $OUT): the plan with its
# pairs sharing A against the unpaired 64-wide tile and forced pairs,
# kernel times, three rounds; then the Hopper matmul tests (every forced
# variant, `n2` ones included).
#   bash bench/explore/pair-n/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
for r in 1 2 3; do
  timeout 120 python3 bench/explore/matmul_kernel_times.py --set sharea --calls 40 --variants wg64,wg64n2 > $OUT/kt-sharea-$r.log 2>&1
  grep -E "per call|mm_" $OUT/kt-sharea-$r.log | sed 's/ us per call.*//' | grep -v "^ .*torch\|^ .*gemm\|^ .*nvjet\|^ .*cutlass" | awk '/kernels/{print; next} /mm_wg/{print "      " $2}' | head -80
done
MYNS_REQUIRE_CUDA=1 timeout 400 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -x > $OUT/pytest-matmul-kernels.log 2>&1
tail -5 $OUT/pytest-matmul-kernels.log
cd $OUT && tar czf logs.tgz *.log && rm -f kt-*.log
