#!/usr/bin/env bash
# Device run 4: every variant timed after a read flush (L2 left clean), where
# cuBLAS streams faster than the library kernel; do_bench's zero_() flush
# leaves L2 dirty and the write-back shares DRAM with the kernel (runs 1-3).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
CFGS="base8:8:16:0:1:0 pipe8:8:16:1:1:0 pipe8s:8:8:1:1:0 big8:8:32:0:1:0 w16:16:16:0:1:0 w16p:16:8:1:1:0 b2:8:16:0:2:0 ev2:8:16:0:1:2"
export BUILD=/tmp/skbuild
"$here/build.sh" $CFGS > "$OUT/build4.txt" 2>&1
grep -il error $BUILD/ptxas-*.txt
python3 "$here/bench.py" --build $BUILD --configs "$(echo $CFGS | tr ' ' ,)" --ranks 1,2,4 --rounds 3 --flush read \
  --out "$OUT/run4.json" > "$OUT/run4.txt" 2>&1
tail -3 "$OUT/run4.txt"
