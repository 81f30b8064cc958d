#!/bin/bash
# Device run (bundle in .gpu/ built with attempt.diff applied, results in
# $OUT): bench/explore/row-groups/diag.py, one product per process.
set -u
source bench/explore/tf32-llm/env.sh
python3 bench/explore/row-groups/diag.py 2>&1 | tee $OUT/diag.log
