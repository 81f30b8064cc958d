#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the one-wave cooperative
# widths (`wg96` to `wg176`, plan.rs `wg_one_wave`). Their tests first (the
# LLM shapes, every Hopper variant), then kernel timings against cuBLAS:
# each width forced beside the plan on the products it is for, and the
# plan over 256 and 512 rows against every sweep weight, both B layouts.
#   bash bench/explore/mid-waves/run2.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-200} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "one_wave or hopper_variants" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
W="256,3072,9216;512,3584,4608;256,4096,6144;512,8192,3072;512,18944,3584;512,3584,3584;256,8192,10240;256,4096,11008;512,11008,4096;512,3072,9216;256,18944,3584"
timeout ${W_S:-150} python3 $S --shapes "$W" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg192 > $OUT/widths-nk.md 2>&1
timeout ${A_S:-150} python3 $S --ms 256,512 > $OUT/auto-nk.md 2>&1
timeout ${A_S:-150} python3 $S --ms 256,512 --layout kn > $OUT/auto-kn.md 2>&1
cat $OUT/widths-nk.md $OUT/auto-nk.md $OUT/auto-kn.md
