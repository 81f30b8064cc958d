#!/bin/bash
# Device run (bundle in .gpu/, libmyns.so.xz; results in $OUT): the
# unaligned-output GPU test, then the widths forced against the plan on
# products whose output rows are off 16 bytes (the staged copy-out: 256
# wide in two rounds of 128 columns, 192 and 128 in one, 320 in five of 64).
#   bash bench/explore/tma-rows/widths.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
[ -n "${NO_TEST:-}" ] || MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "unaligned_output" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest.log
V=${V:-wg256,wg192,wg128,wg192c2,wg320}
ROUNDS=${ROUNDS:-3}
for r in $(seq $ROUNDS); do
  echo "## libmyns round $r"
  timeout 120 python3 $S --rounds 1 --layout kn --shapes "4096,4096,4095;2048,4096,1001;4096,4096,2047;2048,8192,8191" --variants $V 2>&1 | grep -v Warn
  timeout 120 python3 $S --rounds 1 --layout nk --shapes "512,4096,4095;8192,4096,50257;2048,4096,32001;4096,4096,11007" --variants $V 2>&1 | grep -v Warn
done | tee $OUT/widths.md
