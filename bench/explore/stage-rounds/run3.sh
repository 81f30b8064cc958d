#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): with the `WGQ` widths
# staged in rounds and the refitted `wave_eff`, the Hopper matmul tests, the
# widths forced on the products where the plan's choice changed or is
# close, and the plan over 256, 384 and 512 rows against the 16 weights of
# the cliff-hunt sweep (nn.Linear's layout).
#   bash bench/explore/stage-rounds/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "one_wave or hopper_variants or unaligned_output or accumulate" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
W="512,11008,4096;256,8192,8192;512,4096,11008;384,4096,14336;256,4096,12288;512,4096,12288;384,8192,8192;512,4096,6144;384,3072,16384"
timeout ${W_S:-200} python3 $S --shapes "$W" --variants wg128,wg144,wg160,wg176,wg192 > $OUT/ties-nk.md 2>&1
timeout ${A_S:-200} python3 $S --ms 256,384,512 > $OUT/auto-nk.md 2>&1
cat $OUT/ties-nk.md $OUT/auto-nk.md
