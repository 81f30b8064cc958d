#!/usr/bin/env bash
# Device run after a plan-only change (library in .gpu/): the matmul and
# bmm pytest files on CUDA (MYNS_REQUIRE_CUDA=1: a skipped CUDA test fails),
# then split.py's SET (default pair2); packed into $OUT/check.tgz.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/check-out}; SET=${SET:-pair2}; mkdir -p "$OUT/r/$SET"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so MYNS_REQUIRE_CUDA=1 MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/r/pytest-matmul.log 2>&1; echo "pytest rc $?"; tail -2 $OUT/r/pytest-matmul.log
timeout 120 python3 bench/explore/decode-split/split.py --rounds 3 --set $SET --out $OUT/r/$SET > $OUT/r/$SET.txt 2>&1; echo "$SET rc $?"
(cd $OUT && tar czf check.tgz r && rm -rf r)
