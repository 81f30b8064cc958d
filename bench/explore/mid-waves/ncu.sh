#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): what holds the 128 x 144
# tile (`wg144`, one wave of 128 tiles) below cuBLAS's 144 x 128 one on
# 256 x 3072 x 9216 (bf16, nn.Linear's weight): ncu of both (speed of light,
# memory, warp states, launch).
#   bash bench/explore/mid-waves/ncu.sh
set -u
source bench/explore/tf32-llm/env.sh
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats"
one() {  # one <tag> <who> <MYNS_MATMUL_KERNEL> M K N
  MYNS_MATMUL_KERNEL=$3 timeout 100 ncu $S --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip 2 --launch-count 1 \
    python3 bench/explore/ncu_matmul.py $2 $4 $5 $6 bf16 1 nk > $OUT/ncu-h200-$1.txt 2>&1
  echo "== $1: exit $?"
  grep -E "^  [a-z_]+.*\(|Duration|L2 Hit Rate|DRAM Throughput|Compute \(SM\) Throughput|Memory Throughput|Stall|Warp Cycles Per Issued" $OUT/ncu-h200-$1.txt | head -14
}
one wg144-256x3072x9216 myns wg144 256 3072 9216
one torch-256x3072x9216 torch auto 256 3072 9216
one wg96-256x4096x6144 myns wg96 256 4096 6144
one torch-256x4096x6144 torch auto 256 4096 6144
