#!/usr/bin/env bash
# Device run: ncu of the library's skinny kernel against cuBLAS on decode
# shapes, caches flushed before the profiled launch (ncu's default), clocks
# left free (--clock-control none). Needs the bundle in .gpu/ (decompressed).
set -uo pipefail
OUT=${OUT:-/tmp/ncu-out}; mkdir -p "$OUT"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader
for shape in "kn 1 4096 4096" "nk 1 4096 4096" "kn 16 4096 4096" "kn 1 4096 14336"; do
  tag=$(echo $shape | tr ' ' _)
  for who in myns torch; do
    ncu --clock-control none --kernel-name regex:"skinny|gemv|gemm|nvjet|splitK|Kernel" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats \
      python3 bench/explore/skinny/ncu_decode.py $who $shape > "$OUT/ncu-$who-$tag.txt" 2>&1
    grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Grid Size|Block Size|Registers Per|Achieved Occupancy|Waves Per SM" "$OUT/ncu-$who-$tag.txt" | head -14
  done
done
