#!/usr/bin/env bash
# Device run 8: does an L2 evict_first policy on the weights' TMA loads
# (CFG_EVICT=1) keep the streamed build from losing to the register build
# after do_bench's dirty-L2 flush? 4 warps on 16 stages, with and without.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
BUILD=/tmp/skbuild8; mkdir -p $BUILD
NVCC=$(which nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
BUILD=$BUILD "$here/build.sh" > "$OUT/build8.txt" 2>&1
for v in "c4s16:" "c4s16e:-DCFG_EVICT=1"; do
  tag=${v%%:*}; defs=${v#*:}
  "$NVCC" -arch=sm_90 -O3 -shared -Xcompiler -fPIC -std=c++17 -I "$root/kernels" -DCFG_CW=4 -DCFG_STAGES=16 $defs "$here/skinny_tma.cu" -o "$BUILD/tma_$tag.so" >> "$OUT/build8.txt" 2>&1 &
done
wait
timeout 100 python3 "$here/debug5.py" $BUILD tma_c4s16e quick > "$OUT/debug8.txt" 2>&1; tail -1 "$OUT/debug8.txt"
P=kn:1x4096x4096,kn:1x4096x14336,kn:16x4096x14336,nk:1x4096x4096,nk:1x4096x14336,nk:16x4096x14336,nk:1x4096x128256
timeout 150 python3 "$here/bench.py" --build $BUILD --tma c4s16,c4s16e --ranks 1 --rounds 5 --problems $P --out "$OUT/run8.json" > "$OUT/run8.txt" 2>&1
timeout 150 python3 "$here/bench.py" --build $BUILD --tma c4s16,c4s16e --ranks 1 --rounds 5 --problems $P --flush read --out "$OUT/run8r.json" > "$OUT/run8r.txt" 2>&1
grep -A4 "^==" "$OUT/run8.txt"; echo READ; grep -A4 "^==" "$OUT/run8r.txt"
