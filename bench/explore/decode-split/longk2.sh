#!/usr/bin/env bash
# Device run (library in .gpu/): split.py's sets (default: longk2 and
# rows32k; SETS="..." to choose), then, with PYTEST=1, the matmul and bmm
# pytest files on CUDA; packed into $OUT/longk2.tgz.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/longk2-out}; mkdir -p "$OUT/r"
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
for SET in ${SETS:-longk2 rows32k}; do
  mkdir -p $OUT/r/$SET
  timeout 200 python3 bench/explore/decode-split/split.py --rounds 3 --set $SET --out $OUT/r/$SET > $OUT/r/$SET.txt 2>&1; echo "$SET rc $?"
done
if [ "${PYTEST:-0}" = 1 ]; then
  MYNS_REQUIRE_CUDA=1 timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/r/pytest-matmul.log 2>&1; echo "pytest rc $?"; tail -2 $OUT/r/pytest-matmul.log
fi
(cd $OUT && tar czf longk2.tgz r && rm -rf r)
