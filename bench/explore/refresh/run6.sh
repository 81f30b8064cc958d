#!/bin/bash
# Device run (bundle in .gpu/), 2026-12-02: pairs of blocks (sharing B:
# `c2`; sharing A: `n2`) on the long-K prefill products, where ncu
# (ncu-large.sh) has cuBLAS on our tile (112 x 128) in 2 x 1 clusters.
# do_bench ratios to cuBLAS (cliff-hunt/sweep.py), checked against float64.
#   bash bench/explore/refresh/run6.sh > bench/explore/refresh/results/pairs-prefill-nk-h200-<commit>.md
set -u
source bench/explore/tf32-llm/env.sh
export MYNS_GIT_COMMIT=$(cat .gpu/COMMIT)
S="512,18944,3584;256,18944,3584;512,14336,4096;512,11008,4096;512,8192,3584;384,18944,3584;512,3584,3584"
timeout 400 python3 bench/explore/cliff-hunt/sweep.py --layout nk --shapes "$S" --variants wg112,wg112c2,wg112n2,wg128,wg128c2,wg128n2,wg96c2,wg96n2 2>&1 | grep -v "^<!--"
