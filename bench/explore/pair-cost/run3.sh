#!/bin/bash
# Device run (bundle of 93ffc3f in .gpu/): compute-sanitizer synccheck and
# initcheck (register stores: it does not see TMA's) over every pair
# variant, then the matmul report.
#   bash bench/explore/pair-cost/run3.sh
set -u
source bench/explore/tf32-llm/env.sh
for tool in synccheck initcheck; do
  env_tma=; [ $tool = initcheck ] && env_tma=off
  MYNS_MATMUL_TMA_STORE=$env_tma timeout -k 10 120 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/explore/pair-cost/sanitize_pairs.py > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc $?" | tee -a $OUT/sanitize-$tool.log
done
bash bench/explore/report.sh bench/explore/pair-cost/run3.sh
