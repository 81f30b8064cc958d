#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the matmul report, its
# `prefill` class with the two half-wave products split in two K ranges.
#   bash bench/explore/stage-rounds/report.sh
set -u
bash bench/explore/report.sh bench/explore/stage-rounds/report.sh
