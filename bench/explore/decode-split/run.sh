#!/usr/bin/env bash
# Device run (library in .gpu/, LIB=base.so by default: the kernels of 4e2d259, unchanged at dc10ed1):
# split.py (both flushes; SET=none skips it), then ncu of our kernel and cuBLAS's on 1 x 14336 x 4096 (kn)
# or NCU_SHAPES, caches flushed.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
LIB=${LIB:-base.so}; [ -f .gpu/$LIB ] || xz -dk .gpu/$LIB.xz; export MYNS_LIBRARY=$PWD/.gpu/$LIB
OUT=${OUT:-/tmp/split-out}; mkdir -p "$OUT"
if [ "${SET:-first}" != none ]; then
  timeout 330 python3 bench/explore/decode-split/split.py --rounds ${ROUNDS:-3} --set ${SET:-first} --out $OUT > $OUT/split.txt 2>&1; echo "split rc $?"
fi
# NCU_SHAPES: "layout M K N" entries (ncu_decode.py's arguments).
if [ "${NCU:-1}" = 1 ]; then
  IFS=, read -ra shapes <<< "${NCU_SHAPES:-kn 1 14336 4096}"
  for shape in "${shapes[@]}"; do
    tag=$(echo ${DTYPE:+$DTYPE }$shape | tr ' ' _)  # DTYPE=tf32: ncu_decode.py in float32 with TF32
    for who in myns torch; do
      timeout 90 ncu --clock-control none --kernel-name regex:"skinny|gemv|gemm|nvjet|splitK|Kernel" --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis ${NCU_MORE:-} \
        python3 bench/explore/skinny/ncu_decode.py $who $shape > "$OUT/ncu-h200-$who-$tag.txt" 2>&1
      grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Grid Size|Block Size|Waves Per SM|L2 Hit" "$OUT/ncu-h200-$who-$tag.txt" | head -11
    done
  done
fi
