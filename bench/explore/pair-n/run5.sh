#!/bin/bash
# Device run (the bundle in .gpu/, results in $OUT): run4's set on the
# library whose plan takes pairs sharing A instead of K ranges (41b224b),
# one round; then the matmul and bmm tests.
#   bash bench/explore/pair-n/run5.sh
set -u
source bench/explore/tf32-llm/env.sh
timeout 120 python3 bench/explore/matmul_kernel_times.py --set sharea2 --calls 40 --variants wg64n2 > $OUT/kt-sharea2-41b224b.log 2>&1
grep -E "per call|  mm_" $OUT/kt-sharea2-41b224b.log | sed 's/ us per call.*//'
MYNS_REQUIRE_CUDA=1 timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest-matmul-bmm-41b224b.log 2>&1
tail -3 $OUT/pytest-matmul-bmm-41b224b.log
