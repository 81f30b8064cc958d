#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the `WGQ` widths with their
# staged TMA-store epilogue (16-column boxes): their tests and the Hopper
# variants' (every layout, accumulating, unaligned output rows), then the
# forced widths and the plan on the products `wg_waves` gives them.
#   bash bench/explore/mid-waves/run6.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "one_wave or hopper_variants or unaligned_output or accumulate" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -3 $OUT/pytest.log
W="256,3072,9216;512,3584,4608;256,4096,6144;512,8192,3072;512,18944,3584;512,3584,3584;256,8192,10240;256,4096,11008;512,3072,9216;384,8192,3072;384,4096,12288;384,3584,4608"
timeout ${W_S:-200} python3 $S --shapes "$W" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg192 > $OUT/widths-nk.md 2>&1
timeout ${F_S:-100} python3 $S --dtype f16 --shapes "256,3072,9216;512,3584,4608;256,4096,6144;512,18944,3584;256,8192,10240;256,4096,11008" > $OUT/f16-nk.md 2>&1
cat $OUT/widths-nk.md $OUT/f16-nk.md
