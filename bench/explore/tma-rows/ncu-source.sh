#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): warp-state samples per SASS
# instruction of the product's kernel, 4096 x 4096 x 4095 (rows off 16 bytes:
# the warps copy them out) against 4096 x 4096 x 4096 (TMA stores), both on
# nn.Linear's weight; the source page as CSV for summing by code region.
#   bash bench/explore/tma-rows/ncu-source.sh
set -u
source bench/explore/tf32-llm/env.sh
for n in 4095 4096; do
  timeout 200 ncu -o $OUT/rep$n -f --section SourceCounters --section WarpStateStats --launch-skip 2 --launch-count 1 -k regex:mm_wg \
    python3 bench/explore/ncu_matmul.py myns 4096 4096 $n bf16 1 nk > $OUT/ncu$n.log 2>&1
  echo "n $n rc $?"
  ncu -i $OUT/rep$n.ncu-rep --page source --csv --print-source sass > $OUT/src$n.csv 2>&1
  ncu -i $OUT/rep$n.ncu-rep --page details --section WarpStateStats > $OUT/warps$n.txt 2>&1
  ls -la $OUT/src$n.csv; rm -f $OUT/rep$n.ncu-rep
done
