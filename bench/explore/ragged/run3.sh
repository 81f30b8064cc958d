#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the new plan against the
# plan it replaced, on products whose plan changed (verify-1.txt).
#   bash bench/explore/ragged/run3.sh
set -u
bash bench/explore/ragged/verify.sh 1 5 300
