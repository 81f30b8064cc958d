// Variants of kernels/rope.cu (as of 2f69311) for rope_inplace.py (an
// exploration; `rope_flat2` became the library's kernel). rope_flat: one
// thread per (token, head, 16-byte pack of the first half), grid.x over
// tokens, grid.y over groups of heads, grid.z over a row's packs beyond
// blockDim.x. Nothing carries from one row to the next, so the registers
// are those of one row's loads (the kernel of 2f69311 loops over tokens and
// heads and takes 64).
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

struct RopeParams {  // as kernels/rope.cu's (lanes unused)
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

// LINEAR: blockIdx.x counts (token, group of heads) pairs, the group
// fastest (p.lanes = the number of groups), so a token's heads are read by
// consecutive blocks; otherwise grid (tokens, groups).
template <typename T, int N, bool LINEAR>
__device__ void rope_flat_impl(const RopeParams& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2;
  const int64_t j = ((int64_t)blockIdx.z * blockDim.x + threadIdx.x) * N;
  const uint32_t groups = LINEAR ? (uint32_t)p.lanes : 1;
  const uint32_t tok32 = LINEAR ? blockIdx.x / groups : blockIdx.x;
  const int group = LINEAR ? (int)(blockIdx.x - tok32 * groups) : (int)blockIdx.y;
  const int hh = group * blockDim.y + threadIdx.y, hq = (int)p.heads[0];
  if (j >= half || hh >= hq + (int)p.heads[1]) return;
  const int64_t tok = tok32;
  const int64_t b = (uint32_t)tok / (uint32_t)p.seq, s = tok - b * p.seq;
  const bool is_k = hh >= hq;
  const int64_t h = is_k ? hh - hq : hh;
  const T* x = static_cast<const T*>(is_k ? p.x[1] : p.x[0]) + b * (is_k ? p.xs[1][0] : p.xs[0][0]) +
               h * (is_k ? p.xs[1][1] : p.xs[0][1]) + s * (is_k ? p.xs[1][2] : p.xs[0][2]);
  T* o = static_cast<T*>(is_k ? p.out[1] : p.out[0]) + b * (is_k ? p.os[1][0] : p.os[0][0]) +
         h * (is_k ? p.os[1][1] : p.os[0][1]) + s * (is_k ? p.os[1][2] : p.os[0][2]);
  const int64_t coff = b * p.cs[0] + s * p.cs[1];
  const T* c = static_cast<const T*>(p.cos) + coff;
  const T* sn = static_cast<const T*>(p.sin) + coff;
  const P x1 = *reinterpret_cast<const P*>(x + j), x2 = *reinterpret_cast<const P*>(x + j + half);
  const P c1 = *reinterpret_cast<const P*>(c + j), c2 = *reinterpret_cast<const P*>(c + j + half);
  const P s1 = *reinterpret_cast<const P*>(sn + j), s2 = *reinterpret_cast<const P*>(sn + j + half);
  P o1, o2;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const A a = to_acc(x1.v[k]), bb = to_acc(x2.v[k]);
    o1.v[k] = from_acc<T>(a * to_acc(c1.v[k]) - bb * to_acc(s1.v[k]));
    o2.v[k] = from_acc<T>(bb * to_acc(c2.v[k]) + a * to_acc(s2.v[k]));
  }
  *reinterpret_cast<P*>(o + j) = o1;
  *reinterpret_cast<P*>(o + j + half) = o2;
}

extern "C" __global__ void __launch_bounds__(256) rope_flat(const RopeParams p) { rope_flat_impl<__nv_bfloat16, 8, false>(p); }
extern "C" __global__ void __launch_bounds__(256) rope_flat2(const RopeParams p) { rope_flat_impl<__nv_bfloat16, 8, true>(p); }

// A copy of a pack the compiler cannot see through: cos and sin pass
// through it once per group of rows, so their conversions to float are made
// again there instead of being hoisted out of the loop as 32 live floats.
template <typename P>
__device__ __forceinline__ P fresh(const P& v) {
  static_assert(sizeof(P) % 4 == 0, "whole words");
  P out;
  const uint32_t* in = reinterpret_cast<const uint32_t*>(&v);
  uint32_t* o = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(P) / 4); ++i) asm volatile("mov.b32 %0, %1;" : "=r"(o[i]) : "r"(in[i]));
  return out;
}

// One block per token (grid.x, looping past gridDim.x), threads x over a
// row's packs, threads y over head slots; each thread loads its token's cos
// and sin once, then takes its heads R at a time, every load of the R rows
// issued before the first store (as Liger-Kernel's triton kernel loads a
// token's whole tile of heads at once).
template <typename T, int N, int R>
__device__ void rope_tok_impl(const RopeParams& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2;
  const int64_t j = ((int64_t)blockIdx.z * blockDim.x + threadIdx.x) * N;
  if (j >= half) return;
  const int hq = (int)p.heads[0], heads = hq + (int)p.heads[1], ny = blockDim.y;
  const int64_t tokens = p.batch * p.seq;
#pragma unroll 1
  for (int64_t tok = blockIdx.x; tok < tokens; tok += gridDim.x) {
    const int64_t b = tok / p.seq, s = tok - b * p.seq;
    const int64_t coff = b * p.cs[0] + s * p.cs[1];
    const T* c = static_cast<const T*>(p.cos) + coff;
    const T* sn = static_cast<const T*>(p.sin) + coff;
    const P c1 = *reinterpret_cast<const P*>(c + j), c2 = *reinterpret_cast<const P*>(c + j + half);
    const P s1 = *reinterpret_cast<const P*>(sn + j), s2 = *reinterpret_cast<const P*>(sn + j + half);
    const T* xq = static_cast<const T*>(p.x[0]) + b * p.xs[0][0] + s * p.xs[0][2] + j;
    const T* xk = static_cast<const T*>(p.x[1]) + b * p.xs[1][0] + s * p.xs[1][2] + j;
    T* oq = static_cast<T*>(p.out[0]) + b * p.os[0][0] + s * p.os[0][2] + j;
    T* ok = static_cast<T*>(p.out[1]) + b * p.os[1][0] + s * p.os[1][2] + j;
#pragma unroll 1
    for (int h0 = threadIdx.y; h0 < heads; h0 += ny * R) {
      const P c1f = fresh(c1), c2f = fresh(c2), s1f = fresh(s1), s2f = fresh(s2);
      P x1[R], x2[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int hh = h0 + r * ny;
        if (hh < heads) {
          const T* x = hh >= hq ? xk + (hh - hq) * p.xs[1][1] : xq + hh * p.xs[0][1];
          x1[r] = *reinterpret_cast<const P*>(x);
          x2[r] = *reinterpret_cast<const P*>(x + half);
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int hh = h0 + r * ny;
        if (hh < heads) {
          P o1, o2;
#pragma unroll
          for (int k = 0; k < N; ++k) {
            const A a = to_acc(x1[r].v[k]), bb = to_acc(x2[r].v[k]);
            o1.v[k] = from_acc<T>(a * to_acc(c1f.v[k]) - bb * to_acc(s1f.v[k]));
            o2.v[k] = from_acc<T>(bb * to_acc(c2f.v[k]) + a * to_acc(s2f.v[k]));
          }
          T* o = hh >= hq ? ok + (hh - hq) * p.os[1][1] : oq + hh * p.os[0][1];
          *reinterpret_cast<P*>(o) = o1;
          *reinterpret_cast<P*>(o + half) = o2;
        }
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) rope_tok1(const RopeParams p) { rope_tok_impl<__nv_bfloat16, 8, 1>(p); }
// R = 2 and 4 took 119 and 154 registers (100 and 126 without `fresh`), and
// spilled 124 and 440 bytes at 64: not measured.
