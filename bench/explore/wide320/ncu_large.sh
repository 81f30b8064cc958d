#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): what holds the large bf16
# products at 0.97-1.00 of cuBLAS (the target is 1.05): ncu of
# ours and cuBLAS on 4096^3 and 8192 x 4096 x 14336 (row-major B), speed of
# light, compute workload (tensor pipe), warp states, one launch each after
# two.
#   bash bench/explore/wide320/ncu_large.sh
set -u
source bench/explore/tf32-llm/env.sh
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats"
for shape in "4096 4096 4096" "8192 4096 14336"; do
  for who in myns torch; do
    tag=$who-$(echo $shape | tr ' ' 'x')
    timeout 100 ncu $S --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip 2 --launch-count 1 \
      python3 bench/explore/ncu_matmul.py $who $shape > $OUT/ncu-h200-$tag.txt 2>&1
    echo "== $tag: exit $?"
    grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|Stall" $OUT/ncu-h200-$tag.txt | head -8
  done
done
