#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT) after the plan change:
# the decode and wave-tile tests on CUDA, the cliffs' shapes (and LM heads
# at 40 to 64 rows) against forced plans, the whole sweep, the report.
#   bash bench/explore/cliff-hunt/verify.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "decode_streaming or wave_tiles" > $OUT/pytest.log 2>&1
echo "pytest rc $?"; tail -2 $OUT/pytest.log
C="48,4096,32000;64,4096,32000;64,4096,128256;40,4096,50304;64,8192,28672;32,4096,28672;17,3584,18944;24,3584,18944;32,3584,18944;128,3072,9216;192,4096,6144;256,3584,4608;64,4096,8192;48,4096,6144;40,4096,5000"
timeout 150 python3 $S --shapes "$C" --variants skinny_tma,wgh128,wgh64,wgh144,wg256 > $OUT/verify-c.md 2>&1
timeout 150 python3 $S > $OUT/sweep.md 2>&1
timeout 120 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/cliff-hunt/verify.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
cat $OUT/verify-c.md; grep -A12 "by class" $OUT/mm/*.md
