#!/bin/bash
# Device run (bundle in .gpu/ built with attempt.diff applied, results in
# $OUT): TF32 with a's rows off 16 bytes read in place as row groups
# (src/gemm/sm90.rs `RowGroups` in the attempt; README.md): the
# matmul tests that reach them, memcheck and racecheck over the new test,
# kernel times with the groups and without (MYNS_MATMUL_ROW_GROUPS=off: the
# staging copy), then the matmul report.
#   bash bench/explore/row-groups/run1.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
T=tests/python/test_matmul_kernels.py
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -p no:cacheprovider $T \
  -k "row_groups or unaligned_output or edge_cases or tf32 or large_and_llm" > $OUT/pytest.log 2>&1
tail -3 $OUT/pytest.log
for tool in memcheck racecheck; do
  MYNS_REQUIRE_CUDA=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $T \
    -k "row_groups and (auto or wgrh64 or k2)" > $OUT/$tool.log 2>&1
  echo "$tool rc $?"; tail -2 $OUT/$tool.log
done
for g in auto off; do
  MYNS_MATMUL_ROW_GROUPS=$g timeout 100 python3 bench/explore/matmul_kernel_times.py --set tf32u --calls 30 > $OUT/kt-tf32u-$g.log 2>&1
  echo "== row groups $g"; grep -v Warn $OUT/kt-tf32u-$g.log | grep -v _warn_once
done
bash bench/explore/report.sh bench/explore/row-groups/run1.sh
grep "| unaligned\|aligned neighbour" $OUT/mm/*.md
