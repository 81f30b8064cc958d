#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): stream-K forced (`<tile>sk`)
# against the automatic plan. First its tests (every Hopper variant, the
# new ones included, and the wave-and-a-bit products), then kernel timings
# against cuBLAS: set B, 96 to 512 rows against LLM weights (fractional
# waves of whole tiles), and squares, ragged and Llama shapes with a
# row-major B.
#   bash bench/explore/stream-k/run.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "stream_k or hopper_variants" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
B="96,3072,9216;128,3072,9216;256,3072,9216;512,3072,9216;256,3584,4608;512,3584,4608;128,3584,3584;256,3584,3584;512,3584,3584;256,4096,11008;512,4096,11008;256,18944,3584;512,18944,3584;256,8192,3072;512,8192,3072;256,4096,6144;512,4096,6144;256,8192,10240;512,8192,10240;1024,4096,6144"
timeout ${B_S:-200} python3 $S --shapes "$B" --variants wg128sk,wg192sk,wg256sk > $OUT/sk-b.md 2>&1
Q="512,512,512;1000,1000,1000;1024,1024,1024;2048,2048,2048;3000,1000,2000;4096,4096,4096;4096,4096,4088;8192,8192,8192;4096,4096,14336;4096,14336,4096;8192,4096,14336"
timeout ${Q_S:-200} python3 $S --layout kn --shapes "$Q" --variants wg128sk,wg192sk,wg256sk > $OUT/sk-q.md 2>&1
cat $OUT/sk-b.md $OUT/sk-q.md
