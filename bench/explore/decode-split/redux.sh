#!/usr/bin/env bash
# Device run for the 64-row tiles' K ranges summed in a cluster (`wgh*k2`,
# `wgh*k4`; library in .gpu/): the forced Hopper variants' test (the new
# ones among them), then split.py's `redux` set.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/redux-out}; mkdir -p "$OUT/redux"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
export PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1
timeout 240 python3 -m pytest -q -x tests/python/test_matmul_kernels.py -k "hopper_variants" > $OUT/hopper.txt 2>&1; echo "hopper rc $?"; tail -3 $OUT/hopper.txt
timeout 200 python3 bench/explore/decode-split/split.py --rounds 3 --set redux --out $OUT/redux > $OUT/redux.txt 2>&1; echo "redux rc $?"
