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
  const int64_t cd = p.cs[2];
  for (int64_t tok = (int64_t)blockIdx.y * per_block + threadIdx.y / lanes; tok < tokens;
       tok += (int64_t)gridDim.y * per_block) {
    const int64_t b = tok / p.seq, s = tok - b * p.seq;
    const int64_t coff = b * p.cs[0] + s * p.cs[1];
    const T* c = static_cast<const T*>(p.cos) + coff;
    const T* sn = static_cast<const T*>(p.sin) + coff;
    P c1, c2, s1, s2;
    if constexpr (N > 1) {  // the last strides are 1 and every row 16-byte aligned
      c1 = *reinterpret_cast<const P*>(c + j);
      c2 = *reinterpret_cast<const P*>(c + j + half);
      s1 = *reinterpret_cast<const P*>(sn + j);
      s2 = *reinterpret_cast<const P*>(sn + j + half);
    } else {
      c1.v[0] = c[j * cd];
      c2.v[0] = c[(j + half) * cd];
      s1.v[0] = sn[j * cd];
      s2.v[0] = sn[(j + half) * cd];
    }
    // Two heads per pass (hh and hh + lanes), both rows' loads issued before
    // either is used: more bytes in flight per thread.
    for (int64_t hh = lane; hh < heads; hh += 2 * lanes) {
      const int64_t hs[2] = {hh, hh + lanes};
      const bool two = hs[1] < heads;
      P x1[2], x2[2];
      T* o[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        if (u == 1 && !two) break;
        const int t = hs[u] >= hq;  // 0: q, 1: k
        const int64_t h = t ? hs[u] - hq : hs[u];
        const T* x = static_cast<const T*>(p.x[t]) + b * p.xs[t][0] + h * p.xs[t][1] + s * p.xs[t][2];
        o[u] = static_cast<T*>(p.out[t]) + b * p.os[t][0] + h * p.os[t][1] + s * p.os[t][2];
        if constexpr (N > 1) {
          x1[u] = *reinterpret_cast<const P*>(x + j);
          x2[u] = *reinterpret_cast<const P*>(x + j + half);
        } else {
          const int64_t xd = p.xs[t][3];
          x1[u].v[0] = x[j * xd];
          x2[u].v[0] = x[(j + half) * xd];
        }
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        if (u == 1 && !two) break;
        P o1, o2;
#pragma unroll
        for (int k = 0; k < N; ++k) {
          const A a = to_acc(x1[u].v[k]), bb = to_acc(x2[u].v[k]);
          o1.v[k] = from_acc<T>(a * to_acc(c1.v[k]) - bb * to_acc(s1.v[k]));
          o2.v[k] = from_acc<T>(bb * to_acc(c2.v[k]) + a * to_acc(s2.v[k]));
        }
        if constexpr (N > 1) {
          *reinterpret_cast<P*>(o[u] + j) = o1;
          *reinterpret_cast<P*>(o[u] + j + half) = o2;
        } else {
          const int t = hs[u] >= hq;
          const int64_t od = p.os[t][3];
          o[u][j * od] = o1.v[0];
          o[u][(j + half) * od] = o2.v[0];
        }
      }
    }
  }
}

// At most 80 registers (three blocks of 256 threads per SM): ptxas gives the
// two-head loop 107-117 otherwise, which left two blocks and too few loads in
// flight (the 16-bit types spill 20-44 bytes instead).
#define MYNS_ROPE(suffix, T, N) \
  extern "C" __global__ void __launch_bounds__(256, 3) rope_##suffix(const RopeParams p) { rope_impl<T, N>(p); }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_ROPE)
