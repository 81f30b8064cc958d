// Host emulation of the CUDA subset the matmul kernels use: each block runs
// its threads as cooperative fibers (ucontext) so __syncthreads and
// warp-collective ops (ldmatrix, mma.sync) work; blocks run one at a time.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <vector>
#include <ucontext.h>
#include <cstdio>
#include <cstdlib>

#undef __global__
#undef __device__
#undef __forceinline__
#undef __shared__
#undef __align__
#undef __launch_bounds__
#undef __restrict__
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __restrict__
#define __grid_constant__
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

namespace emu {
struct Dim { unsigned x = 0, y = 0, z = 0; };
struct Fiber { ucontext_t ctx; Dim tid; bool done = false; std::vector<char> stack; };
inline Fiber* cur = nullptr;
inline ucontext_t sched;
inline Dim block_idx, grid_dim, block_dim;
inline int nthreads = 0;
inline unsigned bar_count = 0, bar_gen = 0;
inline unsigned warp_count[64], warp_gen[64];
inline void yield() { swapcontext(&cur->ctx, &sched); }
inline void syncthreads() {
  unsigned g = bar_gen;
  if (++bar_count == (unsigned)nthreads) { bar_count = 0; ++bar_gen; }
  else while (bar_gen == g) yield();
}
inline void syncwarp() {
  int w = cur->tid.x / 32;
  int n = nthreads - w * 32 < 32 ? nthreads - w * 32 : 32;
  unsigned g = warp_gen[w];
  if (++warp_count[w] == (unsigned)n) { warp_count[w] = 0; ++warp_gen[w]; }
  else while (warp_gen[w] == g) yield();
}
inline int lane() { return cur->tid.x % 32; }
inline int warp() { return cur->tid.x / 32; }
// Per-warp exchange slots for collectives.
inline const void* slot_ptr[64][32];
inline uint32_t slot_u[64][32][12];
}  // namespace emu

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define gridDim (emu::grid_dim)
#define blockDim (emu::block_dim)
#define __syncthreads() emu::syncthreads()
template <class T> inline T __ldg(const T* p) { return *p; }
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
