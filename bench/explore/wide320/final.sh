#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT) at the model change: the
# matmul tests the plans reach (wide tile, LLM shapes, edges, wave tiles),
# the model's products again (the automatic plan should now run as wg320
# did), and the matmul report.
#   bash bench/explore/wide320/final.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py \
  -k "wide_tile or large_and_llm or edge_cases or wave_tiles or bmm" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest.log
S=bench/explore/cliff-hunt/sweep.py
M="768,4096,13824;1024,4096,10240;2560,4096,4096;4096,4096,2560;1024,8192,10240;2048,5120,5120;512,3072,9216;512,8192,10240"
timeout 120 python3 $S --shapes "$M" --variants wg320,wg256c1 > $OUT/model-after.md 2>&1
timeout 150 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/wide320/final.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
cat $OUT/model-after.md; grep -A12 "by class" $OUT/mm/*.md
