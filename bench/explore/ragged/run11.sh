#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the final pairs rule
# (A's lines off 32 bytes too below 90% of a wave) on verify-5.txt, then
# the matmul report (with the ragged row 1280 x 3000 x 1536 nk).
#   bash bench/explore/ragged/run11.sh
set -u
bash bench/explore/ragged/verify.sh 5 5 120
bash bench/explore/report.sh bench/explore/ragged/run11.sh
