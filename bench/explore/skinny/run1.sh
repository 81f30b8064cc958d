#!/usr/bin/env bash
# Device run 1: every variant configuration x cluster size, all decode shapes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
CFGS="base8:8:16:0:1 pipe8:8:16:1:1 pipe8s:8:8:1:1 big8:8:32:0:1 w16:16:16:0:1 w16p:16:8:1:1 b2:8:16:0:2 b2p:8:8:1:2"
export BUILD=/tmp/skbuild
time "$here/build.sh" $CFGS
for f in $BUILD/ptxas-*.txt; do echo "== $f"; grep -E "error|registers|spill" "$f" | grep -v "0 bytes spill stores, 0 bytes spill loads" ; done > "$OUT/ptxas.txt" 2>&1
grep -i error "$OUT/ptxas.txt" | head
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt"
python3 "$here/bench.py" --build $BUILD --configs "$(echo $CFGS | tr ' ' ,)" --rounds 3 --out "$OUT/run1.json" 2>&1 | tee "$OUT/run1.txt"
