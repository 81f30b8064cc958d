#!/usr/bin/env bash
# Device run 5: the TMA-ring prototype (skinny_tma.cu) in several
# configurations "tag:CW:STAGES" against the library kernel (old) and cuBLAS:
# correctness (check.py), then timing after do_bench's zero flush and after
# a read flush (L2 left clean).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
export BUILD=/tmp/skbuild; mkdir -p $BUILD
NVCC=$(which nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
CFGS=${CFGS:-"c2s8:2:8 c4s8:4:8 c4s12:4:12 c4s16:4:16 c8s16:8:16"}
"$here/build.sh" > "$OUT/build5.txt" 2>&1
for c in $CFGS; do
  IFS=: read -r tag cw st <<< "$c"
  "$NVCC" -arch=sm_90 -O3 -shared -Xcompiler -fPIC -std=c++17 -Xptxas -v -I "$root/kernels" -DCFG_CW=$cw -DCFG_STAGES=$st \
    "$here/skinny_tma.cu" -o "$BUILD/tma_$tag.so" > "$BUILD/ptxas-tma-$tag.txt" 2>&1 &
done
wait
ls $BUILD/*.so | tee -a "$OUT/build5.txt"
grep -h "registers\|error" $BUILD/ptxas-tma-*.txt | sort | uniq -c | tee -a "$OUT/build5.txt"
tags=$(for c in $CFGS; do echo -n "${c%%:*},"; done)
libs=$(for c in $CFGS; do echo -n "tma_${c%%:*},"; done)
timeout 120 python3 "$here/debug5.py" $BUILD "${libs%,}" quick > "$OUT/debug5.txt" 2>&1; tail -1 "$OUT/debug5.txt"; grep BAD "$OUT/debug5.txt" | head -5
timeout 120 python3 "$here/check.py" --build $BUILD --libs "${libs%,}" > "$OUT/check5.txt" 2>&1; tail -8 "$OUT/check5.txt"
timeout 200 python3 "$here/bench.py" --build $BUILD --tma "${tags%,}" --ranks 1,2,4 --rounds 3 --out "$OUT/run5.json" > "$OUT/run5.txt" 2>&1
timeout 150 python3 "$here/bench.py" --build $BUILD --tma "${tags%,}" --ranks 1,2,4 --rounds 3 --flush read --out "$OUT/run5r.json" > "$OUT/run5r.txt" 2>&1
grep -A4 "^==" "$OUT/run5.txt" | head -120
echo READ; grep -A3 "^==" "$OUT/run5r.txt" | head -100
