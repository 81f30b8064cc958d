#!/bin/bash
# Device run, 2026-12-02: the 112-wide tile with 7 stages (its output
# staged in rounds of 16 columns; .gpu/alt/, built from a0ba905 with
# src/gemm/tiles.rs WGQ[1] = wg(112, 7, false, 16, 16)) against the
# library's 6 stages (whole output; .gpu/), single blocks and pairs
# (sharing A: n2, as cuBLAS's 112x128_64x7_2x1 on 512 x 18944 x 3584;
# sharing B: c2). Two rounds, the libraries alternating; do_bench ratios to
# cuBLAS (cliff-hunt/sweep.py), checked against float64.
#   bash bench/explore/refresh/run7.sh
# (The general tool for two libraries is ../stage-rounds/ab.sh: W=<shapes>
# V=<variants> with the build under test as .gpu/libmyns.so.xz and the
# base as .gpu/base.so.xz; it also runs the matmul kernel tests. This
# script is kept as the command these results came from.)
set -u
source bench/explore/tf32-llm/env.sh
[ -f .gpu/alt/libmyns.so ] || xz -dk .gpu/alt/libmyns.so.xz
S="512,18944,3584;512,8192,3584;512,3584,3584;384,18944,3584;1280,2048,1280;1200,4096,1280"
for r in 1 2; do
  for lib in base alt; do
    if [ $lib = base ]; then L=.gpu/libmyns.so; C=$(cat .gpu/COMMIT); else L=.gpu/alt/libmyns.so; C="$(cat .gpu/COMMIT)+wg112s7"; fi
    MYNS_LIBRARY=$PWD/$L MYNS_GIT_COMMIT=$C timeout 120 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S" --variants wg112,wg112n2,wg112c2 > $OUT/s7-$lib-$r.md 2>&1
    echo "## $lib round $r"; grep -v "^<!--" $OUT/s7-$lib-$r.md
  done
done
