#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): after `wg_waves`'s split
# form, the Hopper matmul tests, and the plan on every product whose choice
# changed against the plan before (forced by name) and the other split
# forms, three rounds.
#   bash bench/explore/stage-rounds/run6.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "one_wave or hopper_variants or unaligned_output or accumulate" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
timeout 200 python3 $S --shapes "224,18944,3584;256,18944,3584;224,8192,3072;256,8192,3072;320,8192,2048;384,8192,2048" --variants wg192/3,wg128k2,wg192/4,wg112/2,wg96/2,wg128/2 > $OUT/split-nk.md 2>&1
cat $OUT/split-nk.md
