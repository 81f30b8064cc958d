#!/usr/bin/env bash
# Device run 9 (H200, 2026-11-29): with the L2 clean, cuBLAS streams
# 4096 x 14336 decode weights at 3.6 TB/s against our 3.2 (the report's
# clean-L2 table). Our streaming build runs one block per 64-column strip
# on 16 stages (147 KB: one block per SM; 224 strips = 1.7 waves). Do fewer
# stages, and so 2 or 4 blocks per SM with every strip resident at once,
# stream faster? skinny_tma.cu prototype builds, evict_first policy as the
# library: c<consumer warps>s<stages>.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
R=${RUN:-9}; BUILD=/tmp/skbuild$R; mkdir -p $BUILD
NVCC=$(which nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for v in ${VARIANTS:-c4s16 c4s8 c4s4 c8s8}; do
  cw=${v#c}; cw=${cw%%s*}; st=${v##*s}
  "$NVCC" -arch=sm_90 -O3 -shared -Xcompiler -fPIC -std=c++17 -I "$root/kernels" -DCFG_CW=$cw -DCFG_STAGES=$st -DCFG_EVICT=1 "$here/skinny_tma.cu" -o "$BUILD/tma_$v.so" > "$OUT/build${R}-$v.txt" 2>&1 &
done
wait
P=${PROBLEMS:-kn:1x4096x4096,kn:1x4096x14336,kn:16x4096x14336,nk:1x4096x14336,nk:16x4096x14336,nk:1x14336x4096,nk:1x4096x128256}
T=$(echo ${VARIANTS:-c4s16 c4s8 c4s4 c8s8} | tr " " ,)
timeout 200 python3 "$here/bench.py" --build $BUILD --tma $T --ranks 1 --rounds 3 --problems $P --flush read --out "$OUT/run${R}r.json" > "$OUT/run${R}r.txt" 2>&1
timeout 200 python3 "$here/bench.py" --build $BUILD --tma $T --ranks 1 --rounds 3 --problems $P --out "$OUT/run${R}.json" > "$OUT/run${R}.txt" 2>&1
echo READ; grep -A6 "^==" "$OUT/run${R}r.txt"; echo ZERO; grep -A6 "^==" "$OUT/run${R}.txt"
