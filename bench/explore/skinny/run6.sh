#!/usr/bin/env bash
# Device run 6: why run 5's TMA prototype gave wrong sums (and a launch
# failure) on some decode shapes: variants with x from global memory
# (CFG_XTMA=0), with a proxy fence and clobbers (CFG_FENCE, CFG_CLOB), more
# warps and stages; debug5.py quick on each; memcheck on the first.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/skinny-out}; mkdir -p "$OUT"
BUILD=/tmp/skbuild6; mkdir -p $BUILD
NVCC=$(which nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
V="v1:-DCFG_CW=4:-DCFG_STAGES=8 v2:-DCFG_CW=4:-DCFG_STAGES=8:-DCFG_XTMA=0 v3:-DCFG_CW=4:-DCFG_STAGES=8:-DCFG_FENCE=1:-DCFG_CLOB=1 v4:-DCFG_CW=8:-DCFG_STAGES=12"
for v in $V; do
  tag=${v%%:*}; defs=$(echo "${v#*:}" | tr ':' ' ')
  "$NVCC" -arch=sm_90 -O3 -shared -Xcompiler -fPIC -std=c++17 -I "$root/kernels" $defs "$here/skinny_tma.cu" -o "$BUILD/tma_$tag.so" > "$BUILD/ptxas-$tag.txt" 2>&1 &
done
wait; ls $BUILD
for v in $V; do
  tag=${v%%:*}
  timeout 60 python3 "$here/debug5.py" $BUILD tma_$tag quick > "$OUT/debug6-$tag.txt" 2>&1
  echo "$tag: $(grep -c ' ok$' "$OUT/debug6-$tag.txt") ok, $(grep -c BAD "$OUT/debug6-$tag.txt") bad; $(grep -i 'error' "$OUT/debug6-$tag.txt" | head -1)"
done
cat > /tmp/one6.py <<'PY'
import sys, torch
sys.path.insert(0, sys.argv[1])
from bench import Lib
from check import one
gen = torch.Generator(device="cuda").manual_seed(5)
lib = Lib(sys.argv[2], 8, kalign=64)
for rep in range(4):
    print(one(lib, "kn", True, 1, 4096, 14336, 2, 0, gen), flush=True)
PY
timeout 120 compute-sanitizer --tool memcheck python3 /tmp/one6.py "$here" $BUILD/tma_v1.so > "$OUT/memcheck6.txt" 2>&1
grep -m5 -A6 "Invalid\|ERROR SUMMARY\|rror" "$OUT/memcheck6.txt" | head -40
