#!/usr/bin/env bash
# Device run for a change to the decode path only (library in .gpu/): the
# decode and skinny matmul tests, compute-sanitizer memcheck over the
# automatic decode test, and the matmul report (to $OUT/mm.tgz).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/quick-out}; mkdir -p "$OUT"
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q tests/python/test_matmul_kernels.py -k "decode or skinny" > $OUT/pytest-decode.log 2>&1; echo "pytest rc $?"; tail -1 $OUT/pytest-decode.log
MYNS_REQUIRE_CUDA=1 timeout 200 compute-sanitizer --tool memcheck python3 -m pytest -q tests/python/test_matmul_kernels.py -k "test_decode_streaming_and_register_builds and auto" > $OUT/memcheck-decode.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck-decode.log | tail -2
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 200 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
