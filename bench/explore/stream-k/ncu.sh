#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): why stream-K and split K
# ran slower than whole waves on 512 x 3072 x 9216 (bf16, x @ W with W
# row-major): ncu's speed of light and memory sections of the automatic
# plan, `wg192sk`, `wg192/2`, `wg192` and cuBLAS, one launch each after two.
#   bash bench/explore/stream-k/ncu.sh
set -u
source bench/explore/tf32-llm/env.sh
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats"
one() {  # one <tag> <who> <MYNS_MATMUL_KERNEL>
  MYNS_MATMUL_KERNEL=$3 timeout 100 ncu $S --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip 2 --launch-count 1 \
    python3 bench/explore/ncu_matmul.py $2 512 3072 9216 > $OUT/ncu-h200-$1.txt 2>&1
  echo "== $1: exit $?"
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Compute \(SM\) Throughput|dram__bytes|Grid Size" $OUT/ncu-h200-$1.txt | head -12
}
one auto myns auto
one sk myns wg192sk
one split2 myns wg192/2
one wg192 myns wg192
one torch torch auto
