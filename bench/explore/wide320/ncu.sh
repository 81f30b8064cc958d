#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): what holds the 128 x 320
# tile below cuBLAS's 320 x 128 one on 512 x 3072 x 9216 (bf16, W
# row-major): ncu of both (speed of light, memory, warp states, launch),
# and where the kernel's spills are (SASS of a cubin of
# kernels/matmul_sm90a.cu built here, .gpu/probe/sm90a.cubin, if present).
#   bash bench/explore/wide320/ncu.sh
set -u
source bench/explore/tf32-llm/env.sh
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats"
one() {  # one <tag> <who> <MYNS_MATMUL_KERNEL>
  MYNS_MATMUL_KERNEL=$3 timeout 100 ncu $S --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip 2 --launch-count 1 \
    python3 bench/explore/ncu_matmul.py $2 512 3072 9216 > $OUT/ncu-h200-$1.txt 2>&1
  echo "== $1: exit $?"
  grep -E "^  [a-z_]+.*\(|Duration|L2 Hit Rate|Compute \(SM\) Throughput|Memory Throughput|Stall|Warp Cycles Per Issued" $OUT/ncu-h200-$1.txt | head -14
}
one wg320 myns wg320
one torch torch auto
if [ -f .gpu/probe/sm90a.cubin ]; then
  cuobjdump -sass -fun mm_wg320_bf16_kn .gpu/probe/sm90a.cubin > $OUT/sass-wg320-bf16-kn.txt 2>&1
  echo "== sass: $(wc -l < $OUT/sass-wg320-bf16-kn.txt) lines"
  grep -n -E "STL|LDL|WARPGROUP|HGMMA|SYNCS|UTMALDG|UTMASTG|BAR|EXIT|BRA" $OUT/sass-wg320-bf16-kn.txt | grep -B3 -A3 -E "STL|LDL" | head -80
fi
