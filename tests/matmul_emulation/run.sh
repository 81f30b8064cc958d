#!/usr/bin/env bash
# CPU emulation of the matmul CUDA kernels, for checking them without a GPU.
# Compiles the real kernels/matmul_tc.cu, matmul_simt.cu and matmul_sm90a.cu
# with g++, after swapping their inline PTX for emulations written from the
# PTX ISA: every thread of a block is a fiber (ucontext), __syncthreads and
# warp-collectives synchronise the fibers; ldmatrix and mma.sync follow the
# ISA's fragment layouts; cp.async copies land late (at the wait that makes
# them due); mbarriers, TMA tiled loads with 128-byte swizzle and wgmma
# reading shared memory through matrix descriptors follow the ISA's
# canonical layouts; a barrier protocol that stops making progress is
# reported as a deadlock. Each case is checked against a double-precision
# reference with an elementwise bound.
#
# It checks indexing, edge handling, layouts, split-K and the barrier
# protocol; it cannot check timing-dependent behaviour on real hardware or
# performance. Usage: bash tests/matmul_emulation/run.sh [small|big]  (minutes)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inc=$(ls -d "$root"/.venv/lib/python3*/site-packages/nvidia/cu13/include | head -1)
cp "$root"/kernels/{common.cuh,matmul_tc.cu,matmul_simt.cu,matmul_sm90a.cu} "$here"/*.h "$here"/*.cc "$work"/
python3 - "$root" "$work" <<'PY'
import sys
root, work = sys.argv[1], sys.argv[2]
s = open(f"{root}/kernels/matmul_common.cuh").read()
i, j = s.index("// ---- PTX wrappers"), s.rindex("}  // namespace myns")
open(f"{work}/matmul_common.cuh", "w").write(s[:i] + '#include "emu_ptx.h"\n\n' + s[j:])
s = open(f"{root}/kernels/matmul_sm90a.cu").read()
i, j = s.index("__device__ __forceinline__ void mbar_init"), s.index("// Shared-memory matrix descriptor")
s = s[:i] + '#include "emu_wg.h"\n\n' + s[j:]
i, j = s.index("#define MYNS_D8("), s.index("// A_REG (tf32 only)")
s = s[:i] + s[j:]
import re
s = re.sub(r'\n[ \t]*asm volatile\("(?:setmaxnreg|fence\.mbarrier_init)[^\n]*', "", s)
assert "asm" not in s, "unpatched asm left in matmul_sm90a.cu"
open(f"{work}/matmul_sm90a.cu", "w").write(s)
PY
cd "$work"
flags=(-std=c++20 -O1 -w -Wno-psabi -I "$inc" -I . -include emu_prelude.h)
g++ "${flags[@]}" tc_simt_main.cc -o tc_simt
g++ "${flags[@]}" wg_main.cc -o wg
status=0
for d in f16 bf16 tf32 f32; do ./tc_simt "${1:-small}" "$d" 2>/dev/null | tail -1 || status=1; done
./wg 2>/dev/null | tail -1 || status=1
exit $status
