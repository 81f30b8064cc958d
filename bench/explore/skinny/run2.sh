#!/usr/bin/env bash
# Device run 2: L2 eviction policy for the streamed weights (evict_first),
# prefetch hint, with the pipelined and 32-load variants; a read-flush
# diagnostic for the library kernel, cuBLAS and the evict_first variant.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
CFGS="base8:8:16:0:1:0 ev1:8:16:0:1:1 ev2:8:16:0:1:2 ev3:8:16:0:1:3 pipe8ev2:8:16:1:1:2 big8ev2:8:32:0:1:2"
export BUILD=/tmp/skbuild
time "$here/build.sh" $CFGS
for f in $BUILD/ptxas-*.txt; do echo "== $f"; grep -E "error|registers|spill" "$f" | grep -v "0 bytes spill stores, 0 bytes spill loads" ; done > "$OUT/ptxas2.txt" 2>&1
grep -i error "$OUT/ptxas2.txt" | head
python3 "$here/bench.py" --build $BUILD --configs "$(echo $CFGS | tr ' ' ,)" --ranks 1,2,4 --rounds 3 \
  --read-flush cublas,old/plan,base8/plan,ev2/plan --out "$OUT/run2.json" 2>&1 | tee "$OUT/run2.txt"
