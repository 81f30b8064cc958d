// Cross-entropy over the rows of [rows, V] logits (row stride `ld`, the
// last stride 1), a block (or, for short rows, a warp) per row, grid-strided,
// in float32 (float64 for f64):
// - forward: loss[r] = logsumexp(x_r) - x_r[t_r]; 0 where t_r == ignore, NaN
//   where t_r is outside [0, V) (a device-side assert would kill the CUDA
//   context: the NaN reaches the loss instead, as documented);
// - gradient: d[r, j] = (softmax(x_r)_j - [j == t_r]) * scale[r * scale_ld]
//   (0 for ignored rows, NaN for out-of-range targets; scale in the
//   accumulation type), and the forward's loss[r] too when `loss` is given
//   (fused linear cross-entropy's training pass: one read of the row, not
//   two). It may overwrite the
//   logits (d == x, fused linear cross-entropy): the row's max and sum are
//   complete before any element is written, and each element is read by the
//   thread that writes it.
// One pass computes the max and the sum of exp together (online softmax);
// the gradient re-reads the row (from cache) to write it.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::MaxSum;
using myns::Pack;
using myns::to_acc;

template <typename T, int N>
__device__ __forceinline__ MaxSum<typename Acc<T>::type> row_state(const T* x, int64_t V) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  MaxSum<A> st{-INFINITY, A(0)};
  const P* xp = reinterpret_cast<const P*>(x);
  for (int64_t i = threadIdx.x; i < V / N; i += blockDim.x) {
    const P p = xp[i];
#pragma unroll
    for (int k = 0; k < N; ++k) myns::push(st, to_acc(p.v[k]));
  }
  return myns::row_max_sum(st);
}

// The loss of a row from its softmax state and target logit x_t.
template <typename A>
__device__ __forceinline__ A row_loss(MaxSum<A> st, A xt, int64_t t, int64_t V, int64_t ignore) {
  if (t == ignore) return A(0);
  if (t < 0 || t >= V) return A(NAN);
  if (st.m == A(INFINITY)) return A(INFINITY) - xt;  // logsumexp is +inf (the sum of exp(x - m) would be NaN)
  return st.m + log(st.s) - xt;
}

template <typename T, int N>
__device__ void cross_entropy_fwd_impl(const T* __restrict__ logits, int64_t ld, const int64_t* __restrict__ target,
                                       typename Acc<T>::type* __restrict__ loss, int64_t rows, int64_t V,
                                       int64_t ignore) {
  using A = typename Acc<T>::type;
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const T* x = logits + r * ld;
    const MaxSum<A> st = row_state<T, N>(x, V);
    if (threadIdx.x == 0) {
      const int64_t t = target[r];
      loss[r] = row_loss(st, t >= 0 && t < V ? to_acc(x[t]) : A(0), t, V, ignore);
    }
  }
}

template <typename T, int N>
__device__ void cross_entropy_bwd_impl(const T* logits, int64_t ld, const int64_t* __restrict__ target,
                                       const typename Acc<T>::type* __restrict__ scale, int64_t scale_ld, T* d,
                                       int64_t d_ld, typename Acc<T>::type* __restrict__ loss,
                                       int64_t rows, int64_t V, int64_t ignore) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const T* x = logits + r * ld;
    const int64_t t = target[r];
    // The target logit, read before the row's reduction: its barrier (or,
    // a warp per row, the __syncwarp below) orders the read before any
    // thread overwrites the row (d == x).
    const A xt = loss && threadIdx.x == 0 && t >= 0 && t < V ? to_acc(x[t]) : A(0);
    const MaxSum<A> st = row_state<T, N>(x, V);
    if (loss) {
      if (blockDim.x == 32) __syncwarp();
      if (threadIdx.x == 0) loss[r] = row_loss(st, xt, t, V, ignore);
    }
    A f = A(scale[r * scale_ld]);
    if (t == ignore) f = A(0);
    if (t != ignore && (t < 0 || t >= V)) f = A(NAN);
    // A +inf logit: the softmax is 0 at every finite logit (NaN at the
    // infinite ones), as the limit; 1 / s would make the whole row NaN.
    const A inv = st.m == A(INFINITY) ? A(0) : A(1) / st.s;
    const P* xp = reinterpret_cast<const P*>(x);
    P* dp = reinterpret_cast<P*>(d + r * d_ld);
    for (int64_t i = threadIdx.x; i < V / N; i += blockDim.x) {
      const P p = xp[i];
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A prob = myns::fast_exp(to_acc(p.v[k]) - st.m) * inv;
        o.v[k] = from_acc<T>((prob - (i * N + k == t ? A(1) : A(0))) * f);
      }
      dp[i] = o;
    }
  }
}

// The finish of "mean" and "sum" in one block (Rust launches it for up to
// FINISH_MAX_ROWS rows, src/ops/cross_entropy.rs; aten's reductions
// beyond): in a fixed order, so deterministic, and two launches per call
// instead of aten's five or six.
// - reduce: out = sum(loss) (/ the count of rows not ignored for "mean";
//   0 / 0 = NaN, as aten), rounded to T once;
// - scale: the gradient's scale, grad[0] (1 when grad is null) over that
//   count for "mean", in the accumulation type.
template <typename T>
__device__ typename Acc<T>::type counted_rows(const int64_t* __restrict__ target, int64_t n, int64_t ignore) {
  using A = typename Acc<T>::type;
  A c = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) c += target[i] != ignore ? A(1) : A(0);
  return myns::row_sum(c);
}

template <typename T>
__device__ void cross_entropy_reduce_impl(const typename Acc<T>::type* __restrict__ loss,
                                          const int64_t* __restrict__ target, int64_t n, int64_t ignore, int mean,
                                          T* __restrict__ out) {
  using A = typename Acc<T>::type;
  A s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += loss[i];
  s = myns::row_sum(s);
  if (mean) s /= counted_rows<T>(target, n, ignore);
  if (threadIdx.x == 0) out[0] = from_acc<T>(s);
}

template <typename T>
__device__ void cross_entropy_scale_impl(const T* __restrict__ grad, const int64_t* __restrict__ target, int64_t n,
                                         int64_t ignore, int mean, typename Acc<T>::type* __restrict__ scale) {
  using A = typename Acc<T>::type;
  const A g = grad ? to_acc(grad[0]) : A(1);
  const A c = mean ? counted_rows<T>(target, n, ignore) : A(1);
  if (threadIdx.x == 0) scale[0] = mean ? g / c : g;
}

#define MYNS_CE_FINISH(suffix, T)                                                                              \
  extern "C" __global__ void __launch_bounds__(1024) cross_entropy_reduce_##suffix(                          \
      const typename Acc<T>::type* loss, const int64_t* target, int64_t n, int64_t ignore, int mean, T* out) { \
    cross_entropy_reduce_impl<T>(loss, target, n, ignore, mean, out);                                          \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(1024) cross_entropy_scale_##suffix(                           \
      const T* grad, const int64_t* target, int64_t n, int64_t ignore, int mean,                               \
      typename Acc<T>::type* scale) {                                                                          \
    cross_entropy_scale_impl<T>(grad, target, n, ignore, mean, scale);                                         \
  }
MYNS_FOR_EACH_FLOAT(MYNS_CE_FINISH)

#define MYNS_CE(suffix, T, N)                                                                                  \
  extern "C" __global__ void MYNS_ROW_BOUNDS cross_entropy_##suffix(const T* logits, int64_t ld,               \
                                                                    const int64_t* target,                     \
                                                                    typename Acc<T>::type* loss, int64_t rows, \
                                                                    int64_t V, int64_t ignore) {               \
    cross_entropy_fwd_impl<T, N>(logits, ld, target, loss, rows, V, ignore);                                   \
  }                                                                                                            \
  extern "C" __global__ void MYNS_ROW_BOUNDS cross_entropy_backward_##suffix(                                  \
      const T* logits, int64_t ld, const int64_t* target, const typename Acc<T>::type* scale, int64_t scale_ld,  \
      T* d, int64_t d_ld, typename Acc<T>::type* loss, int64_t rows, int64_t V, int64_t ignore) {             \
    cross_entropy_bwd_impl<T, N>(logits, ld, target, scale, scale_ld, d, d_ld, loss, rows, V, ignore);         \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_CE)
