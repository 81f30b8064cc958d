#!/usr/bin/env bash
# Device run 3: the candidate kernel file (new/gemm_skinny.cu: evict_first
# policy on the weight loads, epilogue over rows m < M) against the library's
# and cuBLAS, with eviction-policy variants; correctness of both files.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
CFGS="base8:8:16:0:1:0 ev1:8:16:0:1:1 ev2:8:16:0:1:2 ev3:8:16:0:1:3 pipe8ev2:8:16:1:1:2 big8ev2:8:32:0:1:2"
export BUILD=/tmp/skbuild NEW_SRC=$here/new/gemm_skinny.cu
"$here/build.sh" $CFGS > "$OUT/build3.txt" 2>&1
for f in $BUILD/ptxas-*.txt; do echo "== $f"; grep -E "error|registers|spill" "$f" | grep -v "0 bytes spill stores, 0 bytes spill loads" ; done > "$OUT/ptxas3.txt" 2>&1
grep -i error "$OUT/ptxas3.txt" | head
python3 "$here/check.py" --build $BUILD --libs old,new 2>&1 | tee "$OUT/check3.txt" | tail -5
python3 "$here/bench.py" --build $BUILD --new 8 --configs "$(echo $CFGS | tr ' ' ,)" --ranks 1,2,4 --rounds 3 \
  --read-flush cublas,old/plan,new/plan,ev2/plan --out "$OUT/run3.json" > "$OUT/run3.txt" 2>&1
tail -3 "$OUT/run3.txt"
