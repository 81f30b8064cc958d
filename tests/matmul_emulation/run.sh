#!/usr/bin/env bash
# CPU emulation of the GEMM CUDA kernels, for checking them without a GPU.
# Compiles the real kernels/matmul_tc.cu, matmul_simt.cu, matmul_sm90a.cu,
# gemm_skinny.cu and gemm_pack.cu with g++, after swapping their inline PTX
# for emulations written from the PTX ISA: every thread of a block is a fiber
# (ucontext), __syncthreads and warp-collectives synchronise the fibers;
# ldmatrix and mma.sync follow the ISA's fragment layouts; cp.async copies
# land late (at the wait that makes them due); mbarriers, TMA tiled loads
# and stores, with 128-byte swizzle or none (a store's box must start on a
# 16-byte boundary, as on the H200), stmatrix, and wgmma reading shared
# memory through matrix descriptors (K- and MN-major) follow the ISA's
# canonical layouts; the blocks of a thread-block cluster run together,
# each with its own shared memory, reading each other's through
# distributed shared memory, multicast loads landing in each and arrives
# reaching a peer's barriers; a barrier
# protocol that stops making progress is reported as a deadlock. Each case is
# checked against a double-precision reference with an elementwise bound.
# The kernels' tile header comes from src/gemm/tiles.rs (gen_tiles.rs), as
# build.rs makes it.
#
# It checks indexing, edge handling, layouts, split-K, cluster reductions,
# pairs of blocks sharing a tile and the barrier protocols; it cannot check timing-dependent behaviour on
# real hardware or performance.
# Usage: [EMU_CXXFLAGS=-D...] bash tests/matmul_emulation/run.sh [small|big]  (small: about 2
# minutes on 2 cores; the two-core machine runs the binaries in parallel)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=${1:-small}
work=$(mktemp -d)
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
# The CUDA headers of the toolkit `make setup` installs (.toolchain/), or
# of an older set-up's venv.
inc=$(ls -d "$root"/.toolchain/cuda-*/nvidia/cu13/include "$root"/.venv/lib/python3*/site-packages/nvidia/cu13/include 2>/dev/null | head -1 || true)
cp "$root"/kernels/{common.cuh,matmul_tc.cu,matmul_simt.cu,matmul_sm90a.cu,gemm_skinny.cu,gemm_pack.cu} "$here"/*.h "$here"/*.cc "$work"/
cp "$here/emu_tma.h" "$work/tma.cuh"  # the kernels' mbarrier and TMA wrappers
rustc --edition 2021 -o "$work/gen_tiles" "$here/gen_tiles.rs"
"$work/gen_tiles" > "$work/gemm_tiles.h"
python3 - "$root" "$work" <<'PY'
import re, sys
root, work = sys.argv[1], sys.argv[2]
def cut(s, a, b, insert=""):
    i, j = s.index(a), s.index(b)
    return s[:i] + insert + s[j:]
s = open(f"{root}/kernels/matmul_common.cuh").read()
i, j = s.index("// ---- PTX wrappers"), s.rindex("}  // namespace myns")
open(f"{work}/matmul_common.cuh", "w").write(s[:i] + '#include "emu_ptx.h"\n\n' + s[j:])
s = open(f"{root}/kernels/matmul_sm90a.cu").read()
s = cut(s, "// Launched as a programmatic dependent", "// Shared-memory matrix descriptor", '#include "emu_wg.h"\n\n')
s = cut(s, "#define MYNS_D8(", "// ---- end of the PTX wrappers")
s = re.sub(r'\n[ \t]*asm volatile\("setmaxnreg[^\n]*', "", s)
# Each block of a cluster has its own shared memory (wg_main.cc's windows).
decl = "extern __shared__ __align__(1024) unsigned char smem_raw[];"
assert s.count(decl) == 1, "matmul_sm90a.cu's shared memory declaration changed"
s = s.replace(decl, "unsigned char* const smem_raw = emu_window();")
assert "asm" not in s, "unpatched asm left in matmul_sm90a.cu"
open(f"{work}/matmul_sm90a.cu", "w").write(s)
s = open(f"{root}/kernels/gemm_skinny.cu").read()
s = cut(s, "// ---- PTX (replaced", "// ---- end PTX", '#include "emu_skinny.h"\n')
assert "asm" not in s, "unpatched asm left in gemm_skinny.cu"
open(f"{work}/gemm_skinny.cu", "w").write(s)
s = open(f"{root}/kernels/gemm_pack.cu").read()
s = cut(s, "// ---- PTX (replaced", "// ---- end PTX", '#include "emu_pack.h"\n')
s = s.replace("__shared__ T tile", "static T tile")  # blocks run one at a time
assert "asm" not in s, "unpatched asm left in gemm_pack.cu"
open(f"{work}/gemm_pack.cu", "w").write(s)
PY
cd "$work"
# EMU_CXXFLAGS: extra defines, e.g. a kernel knob's other value (-DMYNS_RS_PENDING=1).
flags=(-std=c++20 -O1 -w -Wno-psabi -I "$inc" -I . -include emu_prelude.h ${EMU_CXXFLAGS:-})
g++ "${flags[@]}" tc_simt_main.cc -o tc_simt &
g++ "${flags[@]}" wg_main.cc -o wg &
g++ "${flags[@]}" skinny_main.cc -o skinny &
wait %1 && wait %2 && wait %3
# Two at a time (two cores); each prints its own summary line last.
run() { "$@" > "$work/$(basename "$1")-${*: -1}.log" 2>&1; }
status=0
run ./wg "$size" & p1=$!
( for d in f16 bf16; do run ./tc_simt "$size" "$d" || exit 1; done ) & p2=$!
wait $p1 || status=1
( for d in tf32 f32; do run ./tc_simt "$size" "$d" || exit 1; done; run ./skinny "$size" || exit 1 ) & p3=$!
wait $p2 || status=1
wait $p3 || status=1
for f in wg-"$size" tc_simt-f16 tc_simt-bf16 tc_simt-tf32 tc_simt-f32 skinny-"$size"; do
  echo "$f: $(tail -1 "$work/$f.log" 2>/dev/null || echo 'no output')"
  grep -E "FAIL|DEADLOCK|misaligned|abort|out of range" "$work/$f.log" | head -5 || true
done
exit $status
