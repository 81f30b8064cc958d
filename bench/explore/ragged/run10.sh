#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): pairs sharing B from 6 rows
# of tiles and, at K >= 2000, from 60% of a wave (`with_shared_b`), against
# the unpaired plan they replace, on products runs 8 and 9 did not time
# (verify-5.txt).   bash bench/explore/ragged/run10.sh
set -u
bash bench/explore/ragged/verify.sh 5 5 250
