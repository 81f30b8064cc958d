#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): pairs sharing B on the
# products whose plan the 32-byte rule changed or kept (verify-2.txt),
# then the matmul report (with its new ragged rows).
#   bash bench/explore/ragged/run5.sh
set -u
bash bench/explore/ragged/verify.sh 2 5 120
bash bench/explore/report.sh bench/explore/ragged/run5.sh
