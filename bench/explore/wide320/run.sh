#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the 128 x 320 tile
# (`wg320`, forced) against the automatic plan. Its tests first (every
# Hopper variant, the new ones included), then kernel timings against
# cuBLAS: set B, 96 to 1024 rows against LLM weights (nn.Linear's layout),
# then squares, ragged and Llama shapes with a row-major B.
#   bash bench/explore/wide320/run.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "wide_tile or hopper_variants" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
B="256,3072,9216;512,3072,9216;1024,3072,9216;512,3584,4608;512,3584,3584;256,4096,11008;512,4096,11008;512,18944,3584;512,8192,3072;512,4096,6144;1024,4096,6144;256,8192,10240;512,8192,10240;512,4096,14336;1024,4096,14336;512,4096,28672;2048,4096,6144"
timeout ${B_S:-200} python3 $S --shapes "$B" --variants wg320,wg320c2,wg256,wg192 > $OUT/b.md 2>&1
Q="2048,2048,2048;3000,1000,2000;4096,4096,4096;4096,4096,4088;8192,8192,8192;4096,4096,14336;4096,14336,4096;8192,4096,14336;8192,14336,4096;2048,4096,32000"
timeout ${Q_S:-200} python3 $S --layout kn --shapes "$Q" --variants wg320,wg320c2,wg256,wg256c2 > $OUT/q.md 2>&1
cat $OUT/b.md $OUT/q.md
