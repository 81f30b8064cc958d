// Rotary position embedding in HuggingFace's convention (`rotate_half`): for
// each row x of q [B, Hq, S, D] and k [B, Hk, S, D] (any strides, the last
// one 1 for the 16-byte path), with c = cos[b, s], s = sin[b, s] ([B or 1,
// S, D]) and h = D / 2:
//   out[j]     = x[j] c[j]         - x[j + h] s[j]
//   out[j + h] = x[j + h] c[j + h] + x[j] s[j + h]      (j < h)
// computed in float32 for half types. Threads x cover a row's pairs (N at a
// time); threads y are `lanes` head lanes times the block's tokens: each
// thread loads its token's cos and sin once and rotates that token's rows of
// its heads (lane, lane + lanes, ...; q's heads first, then k's), so the
// loads of cos and sin and the index arithmetic are per token, not per row
// (HF's q [B, Hq, S, D] is a transposed view: a token's heads are adjacent
// in memory).
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
  int64_t lanes;     // head lanes per token: blockDim.y is a multiple of it
};

// One row per pass, in at most 64 registers (four blocks of 256 threads per
// SM). Two rows per pass in 80 registers ran 3-7% slower on the H100, and
// indexing the stride arrays with a runtime q-or-k held all 26 of them in
// registers: the strides are picked by selects from a token's row bases
// (bench/explore/rope/rope-variants-h100.txt).
template <typename T, int N>
__device__ void rope_impl(const RopeParams& p) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t half = p.dim / 2, pairs = half / N;
  const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;  // first pair index
  if (j >= pairs * N) return;
  const int lanes = (int)p.lanes, lane = threadIdx.y % lanes;
  const int per_block = blockDim.y / lanes;
  const int64_t hq = p.heads[0], heads = hq + p.heads[1], tokens = p.batch * p.seq;
  const bool narrow = tokens <= (int64_t)UINT32_MAX;  // a 32-bit division per token
#pragma unroll 1
  for (int64_t tok = (int64_t)blockIdx.y * per_block + threadIdx.y / lanes; tok < tokens;
       tok += (int64_t)gridDim.y * per_block) {
    const int64_t b = narrow ? (int64_t)((uint32_t)tok / (uint32_t)p.seq) : tok / p.seq, s = tok - b * p.seq;
    const int64_t coff = b * p.cs[0] + s * p.cs[1];
    const T* c = static_cast<const T*>(p.cos) + coff;
    const T* sn = static_cast<const T*>(p.sin) + coff;
    // The token's rows of head 0 in q, k and their outputs.
    const T* xq = static_cast<const T*>(p.x[0]) + b * p.xs[0][0] + s * p.xs[0][2];
    const T* xk = static_cast<const T*>(p.x[1]) + b * p.xs[1][0] + s * p.xs[1][2];
    T* oq = static_cast<T*>(p.out[0]) + b * p.os[0][0] + s * p.os[0][2];
    T* ok = static_cast<T*>(p.out[1]) + b * p.os[1][0] + s * p.os[1][2];
    P c1, c2, s1, s2;
    if constexpr (N > 1) {  // the last strides are 1 and every row 16-byte aligned
      c1 = *reinterpret_cast<const P*>(c + j);
      c2 = *reinterpret_cast<const P*>(c + j + half);
      s1 = *reinterpret_cast<const P*>(sn + j);
      s2 = *reinterpret_cast<const P*>(sn + j + half);
    } else {
      const int64_t cd = p.cs[2];
      c1.v[0] = c[j * cd];
      c2.v[0] = c[(j + half) * cd];
      s1.v[0] = sn[j * cd];
      s2.v[0] = sn[(j + half) * cd];
    }
#pragma unroll 1
    for (int64_t hh = lane; hh < heads; hh += lanes) {
      const bool is_k = hh >= hq;
      const int64_t h = is_k ? hh - hq : hh;
      const T* x = is_k ? xk + h * p.xs[1][1] : xq + h * p.xs[0][1];
      T* o = is_k ? ok + h * p.os[1][1] : oq + h * p.os[0][1];
      P x1, x2;
      if constexpr (N > 1) {
        x1 = *reinterpret_cast<const P*>(x + j);
        x2 = *reinterpret_cast<const P*>(x + j + half);
      } else {
        const int64_t xd = is_k ? p.xs[1][3] : p.xs[0][3];
        x1.v[0] = x[j * xd];
        x2.v[0] = x[(j + half) * xd];
      }
      P o1, o2;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A a = to_acc(x1.v[k]), bb = to_acc(x2.v[k]);
        o1.v[k] = from_acc<T>(a * to_acc(c1.v[k]) - bb * to_acc(s1.v[k]));
        o2.v[k] = from_acc<T>(bb * to_acc(c2.v[k]) + a * to_acc(s2.v[k]));
      }
      if constexpr (N > 1) {
        *reinterpret_cast<P*>(o + j) = o1;
        *reinterpret_cast<P*>(o + j + half) = o2;
      } else {
        const int64_t od = is_k ? p.os[1][3] : p.os[0][3];
        o[j * od] = o1.v[0];
        o[(j + half) * od] = o2.v[0];
      }
    }
  }
}

#define MYNS_ROPE(suffix, T, N) \
  extern "C" __global__ void __launch_bounds__(256, 4) rope_##suffix(const RopeParams p) { rope_impl<T, N>(p); }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_ROPE)
