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
#include <deque>
#include <functional>
#include <map>
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
// `bid`: the fiber's block; `slot`: which of the blocks running together
// (a thread-block cluster) it belongs to, for barriers and warp exchanges.
struct Fiber { ucontext_t ctx; Dim tid; Dim bid; int slot = 0; bool done = false; std::vector<char> stack; };
inline Fiber* cur = nullptr;
inline ucontext_t sched;
inline Dim block_idx, grid_dim, block_dim;
inline int nthreads = 0;
inline unsigned bar_count = 0, bar_gen = 0;  // block slot 0
inline unsigned bar_counts[16], bar_gens[16];  // the other slots of a cluster
inline unsigned warp_count[64], warp_gen[64];
inline long progress = 0;  // bumped by every barrier completion (deadlock detection)
inline void yield() { swapcontext(&cur->ctx, &sched); }
inline void syncthreads() {
  unsigned& count = cur->slot ? bar_counts[cur->slot] : bar_count;
  unsigned& gen = cur->slot ? bar_gens[cur->slot] : bar_gen;
  unsigned g = gen;
  if (++count == (unsigned)nthreads) { count = 0; ++gen; ++progress; }
  else while (gen == g) yield();
}
inline int linear_tid() { return cur->tid.x + cur->tid.y * block_dim.x + cur->tid.z * block_dim.x * block_dim.y; }
// Warp index over all blocks running together.
inline int warp() { return cur->slot * ((nthreads + 31) / 32) + linear_tid() / 32; }
inline int lane() { return linear_tid() % 32; }
inline void syncwarp() {
  int w = warp(), first = (linear_tid() / 32) * 32;
  int n = nthreads - first < 32 ? nthreads - first : 32;
  unsigned g = warp_gen[w];
  if (++warp_count[w] == (unsigned)n) { warp_count[w] = 0; ++warp_gen[w]; ++progress; }
  else while (warp_gen[w] == g) yield();
}
// Per-warp exchange slots for collectives.
inline const void* slot_ptr[64][32];
inline uint32_t slot_u[64][32][12];
}  // namespace emu

// Every lane of the warp exchanges a float with lane ^ `mask`.
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  const int w = emu::warp(), l = emu::lane();
  memcpy(&emu::slot_u[w][l][0], &v, 4);
  emu::syncwarp();
  float r;
  memcpy(&r, &emu::slot_u[w][l ^ mask][0], 4);
  emu::syncwarp();  // no lane overwrites its slot before every lane has read
  return r;
}

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::cur->bid)
#define gridDim (emu::grid_dim)
#define blockDim (emu::block_dim)
#define __syncthreads() emu::syncthreads()
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
inline void __threadfence() {}
// Warp votes on values every lane of the warp computes alike (what the kernels use them for).
inline bool __all_sync(unsigned, bool p) { return p; }
template <class T> inline T __shfl_sync(unsigned, T v, int) { return v; }
inline int atomicAdd(int* p, int v) { const int old = *p; *p += v; return old; }
inline uint4 __ldg(const uint4* p) {
  if ((uintptr_t)p % 16) { fprintf(stderr, "misaligned 16-byte load %p\n", (const void*)p); abort(); }
  return *p;
}
inline uint2 __ldg(const uint2* p) {
  if ((uintptr_t)p % 8) { fprintf(stderr, "misaligned 8-byte load %p\n", (const void*)p); abort(); }
  return *p;
}
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
inline int64_t max(int64_t a, int64_t b) { return a > b ? a : b; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  shift &= 31;
  return (unsigned)((((uint64_t)hi << 32) | lo) >> shift);
}
// PTX prmt (default mode): byte i of the result is byte sel[4i+3:4i] of {b, a}.
inline unsigned __byte_perm(unsigned a, unsigned b, unsigned sel) {
  uint64_t v = ((uint64_t)b << 32) | a;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
