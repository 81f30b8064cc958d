#!/bin/bash
# Device run (bundle in .gpu/, results in $OUT): unsplit 128 x 128 tiles
# against the K ranges they replaced where they fill the fewest SMs (70 to
# 72 tiles; verify-3.txt).   bash bench/explore/ragged/run6.sh
set -u
bash bench/explore/ragged/verify.sh 3 7 200
