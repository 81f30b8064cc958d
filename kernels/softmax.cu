// Softmax over the last dimension of a contiguous [rows, H] buffer.
// Rows that fit in registers (the usual case): max, then the sum of
// exp(x - max), then exp(x - max) / sum, as torch.softmax computes it.
// Longer rows: one pass computes max and sum of exp together (online
// softmax), a second writes exp(x - max) / sum. -inf entries give 0; an all
// -inf row gives NaN, as torch.softmax does.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::MaxSum;
using myns::Pack;
using myns::to_acc;

template <typename T, int N>
__device__ void softmax_impl(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t H) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  constexpr int C = myns::kCachedPacks;
  const int64_t hv = H / N;
  const bool cached = hv <= (int64_t)C * blockDim.x;
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    P* yp = reinterpret_cast<P*>(y + r * H);
    if (cached) {
      P cache[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) cache[c] = xp[i];
      }
      A m = -INFINITY;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
#pragma unroll
          for (int k = 0; k < N; ++k) m = myns::Max{}(m, to_acc(cache[c].v[k]));
        }
      }
      m = myns::row_max(m);
      // float32/64 keep exp(x - m) in registers for the last pass; 16-bit
      // types (twice the elements per pack) recompute it: keeping 32 floats
      // per thread costs more in occupancy than the second exp costs.
      constexpr bool keep = sizeof(T) >= 4;
      A e[C][keep ? N : 1];
      A s = 0;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
#pragma unroll
          for (int k = 0; k < N; ++k) {
            const A v = myns::fast_exp(to_acc(cache[c].v[k]) - m);
            if constexpr (keep) e[c][k] = v;
            s += v;
          }
        }
      }
      // The max skips NaN, but exp(NaN - m) is NaN: the sum, and so the
      // whole row, turns NaN, as in torch.softmax.
      s = myns::row_sum(s);
      const A inv = A(1) / s;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
          P o;
#pragma unroll
          for (int k = 0; k < N; ++k) {
            if constexpr (keep) {
              o.v[k] = from_acc<T>(e[c][k] * inv);
            } else {
              o.v[k] = from_acc<T>(myns::fast_exp(to_acc(cache[c].v[k]) - m) * inv);
            }
          }
          yp[i] = o;
        }
      }
    } else {
      MaxSum<A> st{-INFINITY, A(0)};
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i];
#pragma unroll
        for (int k = 0; k < N; ++k) myns::push(st, to_acc(p.v[k]));
      }
      st = myns::row_max_sum(st);
      const A inv = A(1) / st.s;
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i];
        P o;
#pragma unroll
        for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(myns::fast_exp(to_acc(p.v[k]) - st.m) * inv);
        yp[i] = o;
      }
    }
  }
}

// The register-resident form (Rust launches it when each thread's share of a
// row is at most C packs, with one block or warp per row and no more): no
// loop and short code, for small, latency-bound launches.
template <typename T, int N, int C, bool FULL>
__device__ void softmax_regs_impl(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t H) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t r = myns::first_row();
  if (r >= rows) return;  // a whole block (or warp) of rows past the end
  const int hv = (int)(H / N);
  P xs[C];
  myns::load_packs<FULL>(xs, reinterpret_cast<const P*>(x + r * H), hv);
  // Packs past the row's end (zeros) must not count: they stay out of the
  // max, and of the sum as exp(-inf).
  A m = -INFINITY;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    if (FULL || threadIdx.x + c * blockDim.x < hv) {
#pragma unroll
      for (int k = 0; k < N; ++k) m = myns::Max{}(m, to_acc(xs[c].v[k]));
    }
  }
  m = myns::row_max(m);
  A e[C][N];
  A s = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const bool in = FULL || threadIdx.x + c * blockDim.x < hv;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      e[c][k] = in ? myns::fast_exp(to_acc(xs[c].v[k]) - m) : A(0);
      s += e[c][k];
    }
  }
  // NaN entries: the max skips them but exp(NaN - m) is NaN, so the row
  // turns NaN, as in torch.softmax. The sum is in [1, H]: the fast
  // reciprocal is within 2 ulp there (exact in double).
  const A inv = myns::fast_rcp(myns::row_sum(s));
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) xs[c].v[k] = from_acc<T>(e[c][k] * inv);
  }
  myns::store_packs<FULL>(reinterpret_cast<P*>(y + r * H), xs, hv);
}

// gx = y * (g - sum(g * y)) per row.
template <typename T, int N>
__device__ void softmax_backward_impl(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ gx,
                                      int64_t rows, int64_t H) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t hv = H / N;
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const P* gp = reinterpret_cast<const P*>(g + r * H);
    const P* yp = reinterpret_cast<const P*>(y + r * H);
    P* op = reinterpret_cast<P*>(gx + r * H);
    A dot = 0;
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = gp[i], b = yp[i];
#pragma unroll
      for (int k = 0; k < N; ++k) dot += to_acc(a.v[k]) * to_acc(b.v[k]);
    }
    dot = myns::row_sum(dot);
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = gp[i], b = yp[i];
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(to_acc(b.v[k]) * (to_acc(a.v[k]) - dot));
      op[i] = o;
    }
  }
}

#define MYNS_SOFTMAX(suffix, T, N)                                                                                  \
  extern "C" __global__ void MYNS_ROW_BOUNDS softmax_##suffix(const T* x, T* y, int64_t rows, int64_t H) {          \
    softmax_impl<T, N>(x, y, rows, H);                                                                              \
  }                                                                                                                 \
  extern "C" __global__ void MYNS_ROW_BOUNDS softmax_backward_##suffix(const T* g, const T* y, T* gx, int64_t rows, \
                                                       int64_t H) {                                                 \
    softmax_backward_impl<T, N>(g, y, gx, rows, H);                                                                 \
  }                                                                                                                 \
  MYNS_SOFTMAX_REGS(r1_##suffix, T, N, 1)                                                                           \
  MYNS_SOFTMAX_REGS(r2_##suffix, T, N, 2)
#define MYNS_SOFTMAX_REGS(suffix, T, N, C)                                                                          \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS_FULL softmax_##suffix(const T* x, T* y, int64_t rows, int64_t H) { \
    myns::with_full<N, C>(H, [&](auto full) { softmax_regs_impl<T, N, C, decltype(full)::value>(x, y, rows, H); }); \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_SOFTMAX)
