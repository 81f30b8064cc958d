#!/bin/bash
# Device run (library in .gpu/, results in $OUT): where the narrow tiles'
# consumers wait, instruction by instruction. ncu's warp-state sampling per
# SASS instruction (SourceCounters), ours against cuBLAS's, operands left
# in L2, the machine's own clocks; the source page printed as CSV there
# (this machine has no ncu).
#   bash bench/explore/loop-stalls/run1.sh
set -u
source bench/explore/tf32-llm/env.sh
ncu --version | tail -1
for shape in "1024 2048 1024 bf16 1 kn" "768 2048 2048 bf16 1 nk"; do
  tag=$(echo $shape | tr ' ' '-')
  for who in myns torch; do
    timeout 120 ncu --cache-control none --clock-control none --launch-skip 2 --launch-count 1 -k "regex:mm_wg|nvjet" \
      --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o $OUT/$who-$tag \
      python3 bench/explore/ncu_matmul.py $who $shape > $OUT/$who-$tag.log 2>&1
    ncu -i $OUT/$who-$tag.ncu-rep --page source --csv --print-source sass > $OUT/$who-$tag-sass.csv 2>&1
    ncu -i $OUT/$who-$tag.ncu-rep --page details > $OUT/$who-$tag-details.txt 2>&1
    ls -la $OUT/$who-$tag*
  done
done
