#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT) at the final kernels and
# plan: every width forced beside the plan on the products `wg_waves` gives
# them, the plan over 256 to 512 rows against every sweep weight
# (nn.Linear's layout; float16 on Qwen2's), and the matmul report.
#   bash bench/explore/stage-rounds/final.sh
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S=bench/explore/cliff-hunt/sweep.py
W="256,3072,9216;512,3584,4608;256,4096,6144;512,8192,3072;512,18944,3584;512,3584,3584;256,8192,10240;256,4096,11008;512,3072,9216;384,8192,3072;384,4096,12288;384,3584,4608;512,4096,11008;384,3584,14336;512,8192,10240"
timeout 120 python3 $S --shapes "$W" --variants wg96,wg112,wg128,wg144,wg160,wg176,wg192,wg320 > $OUT/widths-nk.md 2>&1
timeout 90 python3 $S --ms 256,384,512 > $OUT/auto-nk.md 2>&1
timeout 60 python3 $S --ms 256,384,512 --dtype f16 --only qwen2 > $OUT/auto-f16-nk.md 2>&1
timeout 200 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm \
  --command "bash bench/explore/stage-rounds/final.sh (bench/bench_matmul.py --rounds 5)" > $OUT/report.log 2>&1
echo "report rc $?"
cat $OUT/widths-nk.md; grep -A14 "by class" $OUT/mm/*.md
