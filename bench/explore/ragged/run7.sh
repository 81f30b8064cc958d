#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): the plan against the plan
# it replaced on 34 products drawn at random (three per kind of change,
# seed 7) from those whose plan changed and runs 3 to 6 did not time
# (verify-4.txt).   bash bench/explore/ragged/run7.sh
set -u
bash bench/explore/ragged/verify.sh 4 5 250
