// Variants of kernels/rope.cu's 16-byte path for rope_variants.py (an
// exploration, not built into the library): per-token row bases picked by a
// select (no runtime index into the parameter arrays), a 32-bit token
// division, HEADS rows per pass, launch bounds (256, MINB).
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

#ifndef MINB
#define MINB 3
#endif
// 1: cos and sin converted again for every row (they stay 16 registers of
// packed pairs instead of 32 floats hoisted out of the head loop).
#ifndef AGAIN
#define AGAIN 1
#endif

#ifndef WORDS
#define WORDS 1
#endif
// bfloat16 k of a 16-byte pack held as words, widened where it is used
// (volatile: not hoisted out of the head loop as 32 floats).
__device__ __forceinline__ float word_acc(const uint4& w, int k) {
  const uint32_t word = k < 2 ? (k == 0 ? w.x : w.x) : k < 4 ? w.y : k < 6 ? w.z : w.w;
  uint32_t bits;
  if (k & 1) {
    asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(bits) : "r"(word));
  } else {
    asm volatile("shl.b32 %0, %1, 16;" : "=r"(bits) : "r"(word));
  }
  return __uint_as_float(bits);
}

struct RopeParams {
  const void* x[2];
  void* out[2];
  const void* cos;
  const void* sin;
  int64_t heads[2];
  int64_t batch, seq, dim;
  int64_t xs[2][4];
  int64_t os[2][4];
  int64_t cs[3];
  int64_t lanes;
};

template <typename T, int N, int HEADS>
__device__ void rope_var_impl(const RopeParams& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2, pairs = half / N;
  const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (j >= pairs * N) return;
  const int lanes = (int)p.lanes, lane = threadIdx.y % lanes;
  const int per_block = blockDim.y / lanes;
  const int hq = (int)p.heads[0], heads = hq + (int)p.heads[1];
  const int64_t tokens = p.batch * p.seq;
  const uint32_t seq = (uint32_t)p.seq;
  const int64_t qh = p.xs[0][1], kh = p.xs[1][1], oqh = p.os[0][1], okh = p.os[1][1];
#pragma unroll 1
  for (int64_t tok = (int64_t)blockIdx.y * per_block + threadIdx.y / lanes; tok < tokens;
       tok += (int64_t)gridDim.y * per_block) {
    const int64_t b = (uint32_t)tok / seq, s = (uint32_t)tok - (uint32_t)b * seq;
    const int64_t coff = b * p.cs[0] + s * p.cs[1];
    const T* c = static_cast<const T*>(p.cos) + coff;
    const T* sn = static_cast<const T*>(p.sin) + coff;
    const T* xq = static_cast<const T*>(p.x[0]) + b * p.xs[0][0] + s * p.xs[0][2] + j;
    const T* xk = static_cast<const T*>(p.x[1]) + b * p.xs[1][0] + s * p.xs[1][2] + j;
    T* oq = static_cast<T*>(p.out[0]) + b * p.os[0][0] + s * p.os[0][2] + j;
    T* ok = static_cast<T*>(p.out[1]) + b * p.os[1][0] + s * p.os[1][2] + j;
#if WORDS
    // Held as raw 32-bit words (bfloat16 pairs) across the head loop.
    const uint4 c1 = *reinterpret_cast<const uint4*>(c + j), c2 = *reinterpret_cast<const uint4*>(c + j + half);
    const uint4 s1 = *reinterpret_cast<const uint4*>(sn + j), s2 = *reinterpret_cast<const uint4*>(sn + j + half);
#else
    const P c1 = *reinterpret_cast<const P*>(c + j), c2 = *reinterpret_cast<const P*>(c + j + half);
    const P s1 = *reinterpret_cast<const P*>(sn + j), s2 = *reinterpret_cast<const P*>(sn + j + half);
#endif
#pragma unroll 1
    for (int hh = lane; hh < heads; hh += HEADS * lanes) {
      P x1[HEADS], x2[HEADS];
      T* o[HEADS];
      bool live[HEADS];
#pragma unroll
      for (int u = 0; u < HEADS; ++u) {
        const int h0 = hh + u * lanes;
        live[u] = h0 < heads;
        if (!live[u]) break;
        const bool is_k = h0 >= hq;
        const int h = is_k ? h0 - hq : h0;
        const T* x = is_k ? xk + h * kh : xq + h * qh;
        o[u] = is_k ? ok + h * okh : oq + h * oqh;
        x1[u] = *reinterpret_cast<const P*>(x);
        x2[u] = *reinterpret_cast<const P*>(x + half);
      }
#pragma unroll
      for (int u = 0; u < HEADS; ++u) {
        if (!live[u]) break;
        P o1, o2;
#pragma unroll
        for (int k = 0; k < N; ++k) {
          const A a = myns::pack_acc<false>(x1[u], k), bb = myns::pack_acc<false>(x2[u], k);
#if WORDS
          o1.v[k] = from_acc<T>(a * word_acc(c1, k) - bb * word_acc(s1, k));
          o2.v[k] = from_acc<T>(bb * word_acc(c2, k) + a * word_acc(s2, k));
#else
          o1.v[k] = from_acc<T>(a * myns::pack_acc<AGAIN>(c1, k) - bb * myns::pack_acc<AGAIN>(s1, k));
          o2.v[k] = from_acc<T>(bb * myns::pack_acc<AGAIN>(c2, k) + a * myns::pack_acc<AGAIN>(s2, k));
#endif
        }
        *reinterpret_cast<P*>(o[u]) = o1;
        *reinterpret_cast<P*>(o[u] + half) = o2;
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256, MINB) rope_h1(const RopeParams p) { rope_var_impl<__nv_bfloat16, 8, 1>(p); }
extern "C" __global__ void __launch_bounds__(256, MINB) rope_h2(const RopeParams p) { rope_var_impl<__nv_bfloat16, 8, 2>(p); }
extern "C" __global__ void __launch_bounds__(256, MINB) rope_h4(const RopeParams p) { rope_var_impl<__nv_bfloat16, 8, 4>(p); }

// Token-major rows (HF's q [B, Hq, S, D], a transposed view of [B, S, Hq, D],
// and empty_like outputs): a token's rows are `ts` apart for every (b, s),
// so each thread takes one head for the whole launch, its row base computed
// once, and steps over tokens (cos and sin: `cts` apart, or their row
// s = tok % seq when broadcast over the batch, `cts` = -1).
#ifndef TMB
#define TMB 1
#endif
struct RopeTm {
  const void* x[2];
  void* out[2];
  const void* cos;
  const void* sin;
  int64_t ts[2], ots[2];   // token strides of q, k and of the outputs
  int64_t hs[2], ohs[2];   // head strides
  int64_t hq, heads, tokens, seq, dim, cts;
};

template <typename T, int N>
__device__ void rope_tm_impl(const RopeTm& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2;
  const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (j >= half) return;
  const int heads = (int)p.heads, h0 = threadIdx.y % heads, per_block = blockDim.y / heads;
  const bool is_k = h0 >= p.hq;
  const int h = is_k ? h0 - (int)p.hq : h0;
  const T* xb = static_cast<const T*>(p.x[is_k]) + h * p.hs[is_k] + j;
  T* ob = static_cast<T*>(p.out[is_k]) + h * p.ohs[is_k] + j;
  const int64_t ts = p.ts[is_k], ots = p.ots[is_k];
  const T* cb = static_cast<const T*>(p.cos) + j;
  const T* sb = static_cast<const T*>(p.sin) + j;
  const uint32_t seq = (uint32_t)p.seq;
#pragma unroll 1
  for (int64_t tok = (int64_t)blockIdx.y * per_block + threadIdx.y / heads; tok < p.tokens;
       tok += (int64_t)gridDim.y * per_block) {
    const int64_t coff = p.cts >= 0 ? tok * p.cts : (int64_t)((uint32_t)tok % seq) * p.dim;
    const T* x = xb + tok * ts;
    const P x1 = *reinterpret_cast<const P*>(x), x2 = *reinterpret_cast<const P*>(x + half);
    const P c1 = *reinterpret_cast<const P*>(cb + coff), c2 = *reinterpret_cast<const P*>(cb + coff + half);
    const P s1 = *reinterpret_cast<const P*>(sb + coff), s2 = *reinterpret_cast<const P*>(sb + coff + half);
    P o1, o2;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const A a = to_acc(x1.v[k]), bb = to_acc(x2.v[k]);
      o1.v[k] = from_acc<T>(a * to_acc(c1.v[k]) - bb * to_acc(s1.v[k]));
      o2.v[k] = from_acc<T>(bb * to_acc(c2.v[k]) + a * to_acc(s2.v[k]));
    }
    T* o = ob + tok * ots;
    *reinterpret_cast<P*>(o) = o1;
    *reinterpret_cast<P*>(o + half) = o2;
  }
}

extern "C" __global__ void __launch_bounds__(1024, TMB) rope_tm(const RopeTm p) { rope_tm_impl<__nv_bfloat16, 8>(p); }
