#!/usr/bin/env bash
# The matmul report from the bundle in .gpu/, then racecheck over the Hopper variants.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so MYNS_GIT_COMMIT=$(cut -c1-7 .gpu/COMMIT)
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
timeout 300 python3 bench/bench_matmul.py --rounds 3 --out $OUT/mm --command "python bench/bench_matmul.py --rounds 3 --out /tmp/mm" > $OUT/bench-matmul.log 2>&1; echo "bench exit $?"
grep -A12 "by class" $OUT/bench-matmul.log
[ -n "${RACE:-}" ] && timeout ${SAN_TIMEOUT_S:-280} compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize --only-wg > $OUT/racecheck-wg.log 2>&1; echo "racecheck exit $?"; tail -3 $OUT/racecheck-wg.log
if [ -n "${TESTS:-}" ]; then
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest-matmul.log 2>&1; echo "pytest exit $?"; tail -2 $OUT/pytest-matmul.log
fi
