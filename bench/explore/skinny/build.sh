#!/usr/bin/env bash
# Builds old.so (kernels/gemm_skinny.cu as is) and one .so per variant
# configuration "tag:WARPS:L:PIPE:MINB[:EVICT]" given as arguments, in parallel;
# ptxas register/spill reports go to $BUILD/ptxas-*.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
NVCC=$(which nvcc 2>/dev/null || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
BUILD=${BUILD:-$here/build}
mkdir -p "$BUILD"
flags=(-arch=sm_90 -O3 -shared -Xcompiler -fPIC -std=c++17 -Xptxas -v -I "$root/kernels" -I "$here")
"$NVCC" "${flags[@]}" -I "$here/stub" "$here/old_inst.cu" -o "$BUILD/old.so" > "$BUILD/ptxas-old.txt" 2>&1 &
if [ -n "${NEW_SRC:-}" ]; then
  # A candidate copy of the kernel file (its own directory holds its gemm_tiles.h).
  "$NVCC" "${flags[@]}" -I "$(dirname "$NEW_SRC")" -DSKINNY_SRC="\"$NEW_SRC\"" "$here/old_inst.cu" -o "$BUILD/new.so" > "$BUILD/ptxas-new.txt" 2>&1 &
fi
for c in "$@"; do
  IFS=: read -r tag w l pipe minb ev <<< "$c"
  "$NVCC" "${flags[@]}" -DCFG_WARPS=$w -DCFG_L=$l -DCFG_PIPE=$pipe -DCFG_MINB=$minb -DCFG_EVICT=${ev:-0} ${ELEMS:+-DWITH_ELEMS} "$here/var_inst.cu" -o "$BUILD/var_$tag.so" > "$BUILD/ptxas-$tag.txt" 2>&1 &
done
wait
ls "$BUILD"/*.so
