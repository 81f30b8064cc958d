// Rotary position embedding in HuggingFace's convention (`rotate_half`): for
// each row x of q [B, Hq, S, D] and k [B, Hk, S, D] (any strides, the last
// one 1 for the 16-byte path), with c = cos[b, s], s = sin[b, s] ([B or 1,
// S, D]) and h = D / 2:
//   out[j]     = x[j] c[j]         - x[j + h] s[j]
//   out[j + h] = x[j + h] c[j + h] + x[j] s[j + h]      (j < h)
// computed in float32 for half types. One thread per (token, head, N-pair
// pack of the first half): threads x over a row's packs, y over a group of
// heads, z over the block's tokens. Blocks count (token group, head group)
// pairs with the head group fastest, so a token's heads are read by
// consecutive blocks (HF's q [B, Hq, S, D] is a transposed view: a token's
// heads are adjacent in memory); grid.y takes packs past blockDim.x.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

// Mirrors `RopeParams` in src/ops/rope.rs field for field (8 bytes each).
struct RopeParams {
  const void* x[2];  // q, k
  void* out[2];
  const void* cos;
  const void* sin;
  int64_t heads[2];
  int64_t batch, seq, dim;
  int64_t xs[2][4];  // strides (b, h, s, d) of q and k
  int64_t os[2][4];  // and of their outputs
  int64_t cs[3];     // strides (b, s, d) of cos and sin; b is 0 when broadcast
  int64_t groups;    // head groups (blockDim.y heads each); gridDim.x = token groups x groups
};

// One 16-byte store: assigned whole (or as a uint4), a pack came out of
// NVVM as 2- or 4-byte stores here.
template <typename P>
__device__ __forceinline__ void store16(void* dst, const P& v) {
  static_assert(sizeof(P) == 16, "a 16-byte pack");
  uint4 w;
  memcpy(&w, &v, 16);
  __stwb(static_cast<uint4*>(dst), w);
}

// Nothing carries from one row to the next: 40 registers for bfloat16. The
// loop over tokens and heads it replaces took 64 and ran 1-4% slower on the
// H100 (bench/explore/rope/rope-inplace-h100.txt); taking a token's heads
// group by group across the whole grid, not group-fastest, lost 3% at 340
// MB (DRAM pages read in strides).
template <typename T, int N>
__device__ void rope_impl(const RopeParams& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2;
  const int64_t j = ((int64_t)blockIdx.y * blockDim.x + threadIdx.x) * N;  // first pair index
  if (j >= half) return;
  // 32-bit index arithmetic: src/ops/rope.rs keeps blocks, tokens and heads
  // below 2^31.
  const uint32_t blk = blockIdx.x, groups = (uint32_t)p.groups, tg = blk / groups;
  const uint32_t hh32 = (blk - tg * groups) * blockDim.y + threadIdx.y, hq32 = (uint32_t)p.heads[0];
  const uint32_t tok = tg * blockDim.z + threadIdx.z;
  if (hh32 >= hq32 + (uint32_t)p.heads[1] || tok >= (uint32_t)(p.batch * p.seq)) return;
  const uint32_t b32 = tok / (uint32_t)p.seq;
  const int64_t b = b32, s = tok - b32 * (uint32_t)p.seq;
  // q's or k's strides by selects: indexing the stride arrays with a runtime
  // q-or-k held all of them in registers.
  const bool is_k = hh32 >= hq32;
  const int64_t h = is_k ? hh32 - hq32 : hh32;
  const T* x = static_cast<const T*>(is_k ? p.x[1] : p.x[0]) + b * (is_k ? p.xs[1][0] : p.xs[0][0]) +
               h * (is_k ? p.xs[1][1] : p.xs[0][1]) + s * (is_k ? p.xs[1][2] : p.xs[0][2]);
  T* o = static_cast<T*>(is_k ? p.out[1] : p.out[0]) + b * (is_k ? p.os[1][0] : p.os[0][0]) +
         h * (is_k ? p.os[1][1] : p.os[0][1]) + s * (is_k ? p.os[1][2] : p.os[0][2]);
  const int64_t coff = b * p.cs[0] + s * p.cs[1];
  const T* c = static_cast<const T*>(p.cos) + coff;
  const T* sn = static_cast<const T*>(p.sin) + coff;
  P x1, x2, c1, c2, s1, s2;
  if constexpr (N > 1) {  // the last strides are 1 and every row 16-byte aligned
    x1 = *reinterpret_cast<const P*>(x + j);
    x2 = *reinterpret_cast<const P*>(x + j + half);
    c1 = *reinterpret_cast<const P*>(c + j);
    c2 = *reinterpret_cast<const P*>(c + j + half);
    s1 = *reinterpret_cast<const P*>(sn + j);
    s2 = *reinterpret_cast<const P*>(sn + j + half);
  } else {
    const int64_t xd = is_k ? p.xs[1][3] : p.xs[0][3], cd = p.cs[2];
    x1.v[0] = x[j * xd];
    x2.v[0] = x[(j + half) * xd];
    c1.v[0] = c[j * cd];
    c2.v[0] = c[(j + half) * cd];
    s1.v[0] = sn[j * cd];
    s2.v[0] = sn[(j + half) * cd];
  }
  P o1, o2;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const A a = to_acc(x1.v[k]), bb = to_acc(x2.v[k]);
    o1.v[k] = from_acc<T>(a * to_acc(c1.v[k]) - bb * to_acc(s1.v[k]));
    o2.v[k] = from_acc<T>(bb * to_acc(c2.v[k]) + a * to_acc(s2.v[k]));
  }
  if constexpr (N > 1) {
    store16(o + j, o1);
    store16(o + j + half, o2);
  } else {
    const int64_t od = is_k ? p.os[1][3] : p.os[0][3];
    o[j * od] = o1.v[0];
    o[(j + half) * od] = o2.v[0];
  }
}

#define MYNS_ROPE(suffix, T, N) \
  extern "C" __global__ void __launch_bounds__(256) rope_##suffix(const RopeParams p) { rope_impl<T, N>(p); }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_ROPE)
