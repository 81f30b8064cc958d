// Layer norm over the last dimension of a contiguous [rows, H] buffer:
// y = (x - mean) * rsqrt(var + eps) * w + b (biased variance, two passes
// over the row: the mean, then the squared deviations from it), accumulated
// in float (double for f64); w and b may be null (ones and zeros).
// Builds as for rms_norm (src/rowwise.rs picks one): the general one (a
// block or warp per row, grid-strided, up to kCachedPacks packs per thread
// kept in registers, longer rows re-read from cache) and the
// register-resident ones (one or two packs per thread, every load issued
// before the reductions). The backward likewise: a general build and
// register-resident ones that also keep their grad_w/grad_b partials in
// registers (src/rowwise.rs plan_block_regs).
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

// Per-feature parameter pack i, or `fill` when the parameter is absent.
template <typename P, typename T>
__device__ __forceinline__ P param_pack(const T* p, int64_t i, T fill) {
  if (p) return reinterpret_cast<const P*>(p)[i];
  P q;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(P) / sizeof(T)); ++k) q.v[k] = fill;
  return q;
}

template <typename T, int N>
__device__ void layer_norm_impl(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                T* __restrict__ y, int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  constexpr int C = myns::kCachedPacks;
  const int64_t hv = H / N;
  const bool cached = hv <= (int64_t)C * blockDim.x;
  const T one = from_acc<T>(A(1)), zero = from_acc<T>(A(0));
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    P* yp = reinterpret_cast<P*>(y + r * H);
    P cache[C];
    A sum = 0;
    if (cached) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) cache[c] = xp[i];
      }
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
#pragma unroll
          for (int k = 0; k < N; ++k) sum += to_acc(cache[c].v[k]);
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i];
#pragma unroll
        for (int k = 0; k < N; ++k) sum += to_acc(p.v[k]);
      }
    }
    const A mean = myns::row_sum(sum) / A(H);
    A sq = 0;
    if (cached) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
#pragma unroll
          for (int k = 0; k < N; ++k) { const A d = to_acc(cache[c].v[k]) - mean; sq += d * d; }
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i];
#pragma unroll
        for (int k = 0; k < N; ++k) { const A d = to_acc(p.v[k]) - mean; sq += d * d; }
      }
    }
    const A rstd = rsqrt(myns::row_sum(sq) / A(H) + A(eps));
    auto write = [&](int64_t i, const P& p) {
      const P q = param_pack<P>(w, i, one), c = param_pack<P>(b, i, zero);
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>((to_acc(p.v[k]) - mean) * rstd * to_acc(q.v[k]) + to_acc(c.v[k]));
      yp[i] = o;
    };
    if (cached) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) write(i, cache[c]);
      }
    } else {
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) write(i, xp[i]);
    }
  }
}

// The register-resident form: x, w and b loaded together before the
// reductions, one row per block or warp.
template <typename T, int N, int C, bool FULL>
__device__ void layer_norm_regs_impl(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                     T* __restrict__ y, int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t r = myns::first_row();
  if (r >= rows) return;
  const int hv = (int)(H / N);
  P xs[C], ws[C], bs[C];
  myns::load_packs<FULL>(xs, reinterpret_cast<const P*>(x + r * H), hv);
  if (w) myns::load_packs<FULL>(ws, reinterpret_cast<const P*>(w), hv);
  if (b) myns::load_packs<FULL>(bs, reinterpret_cast<const P*>(b), hv);
  A sum = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) sum += to_acc(xs[c].v[k]);
  }
  const A mean = myns::row_sum(sum) / A(H);
  A sq = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const bool in = FULL || threadIdx.x + c * blockDim.x < hv;  // packs past the row are zeros, not deviations
#pragma unroll
    for (int k = 0; k < N; ++k) { const A d = in ? to_acc(xs[c].v[k]) - mean : A(0); sq += d * d; }
  }
  const A rstd = rsqrt(myns::row_sum(sq) / A(H) + A(eps));
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      A v = (to_acc(xs[c].v[k]) - mean) * rstd;
      if (w) v *= to_acc(ws[c].v[k]);
      if (b) v += to_acc(bs[c].v[k]);
      xs[c].v[k] = from_acc<T>(v);
    }
  }
  myns::store_packs<FULL>(reinterpret_cast<P*>(y + r * H), xs, hv);
}

// The four-pack form (`r4`, at most 32 registers, as rms_norm's): only x is
// held across the two reductions, and 2048 threads per SM put 1024 rows of
// 1024 packs (8192 bfloat16) in one wave, where the general build takes
// two. To stay in 32 registers each pass reads its elements again through
// volatile instructions (`pack_acc<true>`; the compiler would otherwise keep
// the first pass's values, or x - mean, live across a reduction), w and b
// are read (from cache) where they are used, and y is written over x.
// For rows the threads cover exactly (rowwise::plan_reduce picks it for no other).
template <typename T, int N>
__device__ void layer_norm_r4_impl(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                   T* __restrict__ y, int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  constexpr int C = 4;
  const int64_t r = myns::first_row();
  if (r >= rows) return;
  const int hv = (int)(H / N);
  P xs[C];
  myns::load_packs<true>(xs, reinterpret_cast<const P*>(x + r * H), hv);
  A sum = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) sum += myns::pack_acc<false>(xs[c], k);
  }
  const A mean = myns::row_sum(sum) / A(H);
  A sq = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) { const A d = myns::pack_acc<true>(xs[c], k) - mean; sq += d * d; }
  }
  const A rstd = rsqrt(myns::row_sum(sq) / A(H) + A(eps));
  const P* wp = reinterpret_cast<const P*>(w);
  const P* bp = reinterpret_cast<const P*>(b);
  P* yp = reinterpret_cast<P*>(y + r * H);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    P q{}, o{};
    if (w) q = wp[i];
    if (b) o = bp[i];
    // Element k's half of a word is read before it is written; the other
    // half is left as it was.
#pragma unroll
    for (int k = 0; k < N; ++k) {
      A v = (myns::pack_acc<true>(xs[c], k) - mean) * rstd;
      if (w) v *= to_acc(q.v[k]);
      if (b) v += to_acc(o.v[k]);
      xs[c].v[k] = from_acc<T>(v);
    }
    yp[i] = xs[c];
  }
}

// The backward's three sums over a row: of d^2, gw_ and gw_ * d, with
// d = x - mean and gw_ = g * w (as below) ...
template <typename A>
__device__ __forceinline__ void add_grad_sums(myns::Sums<A, 3>& s, A d, A gw) {
  s.v[0] += d * d;
  s.v[1] += gw;
  s.v[2] += gw * d;
}

// ... and, reduced over the row, rstd, mean(gw_) and mean(gw_ * xhat).
template <typename A>
struct GradStats {
  A rstd, m1, m2;
};
template <typename A>
__device__ __forceinline__ GradStats<A> grad_stats(myns::Sums<A, 3> s, int64_t H, double eps) {
  s = myns::row_sums(s);
  const A rstd = rsqrt(s.v[0] / A(H) + A(eps));
  return {rstd, s.v[1] / A(H), s.v[2] * rstd / A(H)};
}

// Gradients, with xhat = (x - mean) * rstd and gw_ = g * w (g when w is null):
//   gx = rstd * (gw_ - mean(gw_) - xhat * mean(gw_ * xhat)),
//   grad_w = sum over rows of g * xhat, grad_b = sum over rows of g.
// The two sums go per block into pw[blockIdx.x, H] and pb[blockIdx.x, H]
// (myns::ColumnSums: through shared memory when the launch gives 2 H
// accumulators of it, else added into those rows, zeroed by the caller) and
// are summed over blocks afterwards: no atomics, deterministic. Adding into
// global memory after every row took 0.77 ms at 2048 x 16384 bfloat16 on
// the H100, ten times the row traffic's time.
template <typename T, int N>
__device__ void layer_norm_backward_impl(const T* __restrict__ g, const T* __restrict__ x,
                                         const T* __restrict__ w, T* __restrict__ gx,
                                         typename Acc<T>::type* __restrict__ pw,
                                         typename Acc<T>::type* __restrict__ pb, int64_t rows, int64_t H,
                                         double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t hv = H / N;
  const T one = from_acc<T>(A(1));
  A* const out[2] = {pw + (int64_t)blockIdx.x * H, pb + (int64_t)blockIdx.x * H};
  myns::ColumnSums<A, N, 2> acc(out, H);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    const P* gp = reinterpret_cast<const P*>(g + r * H);
    P* op = reinterpret_cast<P*>(gx + r * H);
    A sum = 0;
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i];
#pragma unroll
      for (int k = 0; k < N; ++k) sum += to_acc(a.v[k]);
    }
    const A mean = myns::row_sum(sum) / A(H);
    myns::Sums<A, 3> s{};
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i], gg = gp[i], q = param_pack<P>(w, i, one);
#pragma unroll
      for (int k = 0; k < N; ++k) {
        add_grad_sums(s, to_acc(a.v[k]) - mean, to_acc(gg.v[k]) * to_acc(q.v[k]));
      }
    }
    const auto [rstd, m1, m2] = grad_stats(s, H, eps);
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i], gg = gp[i], q = param_pack<P>(w, i, one);
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A xhat = (to_acc(a.v[k]) - mean) * rstd, gv = to_acc(gg.v[k]);
        o.v[k] = from_acc<T>(rstd * (gv * to_acc(q.v[k]) - m1 - xhat * m2));
        acc(0, i, k) += gv * xhat;
        acc(1, i, k) += gv;
      }
      op[i] = o;
    }
  }
  acc.flush(out);
}

// The register-resident backward: this thread's C packs of every row it
// visits (pack c at threadIdx.x + c * blockDim.x, block-strided over the
// rows), and its share of grad_w and grad_b, stay in registers; the partials
// are written once per block at the end (the general build adds them to
// global memory after every row).
template <typename T, int N, int C, bool FULL>
__device__ void layer_norm_backward_regs_impl(const T* __restrict__ g, const T* __restrict__ x,
                                              const T* __restrict__ w, T* __restrict__ gx,
                                              typename Acc<T>::type* __restrict__ pw,
                                              typename Acc<T>::type* __restrict__ pb, int64_t rows, int64_t H,
                                              double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int hv = (int)(H / N);
  const T one = from_acc<T>(A(1));
  P ws[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    ws[c] = i < hv ? param_pack<P>(w, i, one) : P{};
  }
  A aw[C][N], ab[C][N];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int k = 0; k < N; ++k) aw[c][k] = ab[c][k] = A(0);
  // With one pack per thread, the block's next row loads while this one is
  // reduced (with two, the second set of registers would spill).
  constexpr bool kPrefetch = C == 1;
  P xs[C], gs[C];
  const auto load = [&](int64_t row, P(&xd)[C], P(&gd)[C]) {
    myns::load_packs<FULL>(xd, reinterpret_cast<const P*>(x + row * H), hv);
    myns::load_packs<FULL>(gd, reinterpret_cast<const P*>(g + row * H), hv);
  };
  if (kPrefetch && blockIdx.x < rows) load(blockIdx.x, xs, gs);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    P nx[C], ng[C];
    if (!kPrefetch) {
      load(r, xs, gs);
    } else if (r + gridDim.x < rows) {
      load(r + gridDim.x, nx, ng);
    }
    A sum = 0;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int k = 0; k < N; ++k) sum += myns::pack_acc<false>(xs[c], k);
    const A mean = myns::row_sum(sum) / A(H);
    myns::Sums<A, 3> s{};
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const bool in = FULL || threadIdx.x + c * blockDim.x < hv;  // zero packs past the row are not deviations
#pragma unroll
      for (int k = 0; k < N; ++k) {
        add_grad_sums(s, in ? myns::pack_acc<true>(xs[c], k) - mean : A(0), myns::pack_acc<true>(gs[c], k) * myns::pack_acc<true>(ws[c], k));
      }
    }
    const auto [rstd, m1, m2] = grad_stats(s, H, eps);
    P os[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A xhat = (myns::pack_acc<true>(xs[c], k) - mean) * rstd, gv = myns::pack_acc<true>(gs[c], k);
        os[c].v[k] = from_acc<T>(rstd * (gv * myns::pack_acc<true>(ws[c], k) - m1 - xhat * m2));
        aw[c][k] += gv * xhat;
        ab[c][k] += gv;
      }
    myns::store_packs<FULL>(reinterpret_cast<P*>(gx + r * H), os, hv);
    if (kPrefetch) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        xs[c] = nx[c];
        gs[c] = ng[c];
      }
    }
  }
  A* bw = pw + (int64_t)blockIdx.x * H;
  A* bb = pb + (int64_t)blockIdx.x * H;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    if (i < hv) {
#pragma unroll
      for (int k = 0; k < N; ++k) {
        bw[(int64_t)i * N + k] = aw[c][k];
        bb[(int64_t)i * N + k] = ab[c][k];
      }
    }
  }
}

#define MYNS_LN(suffix, T, N)                                                                                     \
  extern "C" __global__ void MYNS_ROW_BOUNDS layer_norm_##suffix(const T* x, const T* w, const T* b, T* y,        \
                                                                 int64_t rows, int64_t H, double eps) {           \
    layer_norm_impl<T, N>(x, w, b, y, rows, H, eps);                                                              \
  }                                                                                                               \
  extern "C" __global__ void MYNS_ROW_BOUNDS layer_norm_backward_##suffix(                                        \
      const T* g, const T* x, const T* w, T* gx, typename Acc<T>::type* pw, typename Acc<T>::type* pb,            \
      int64_t rows, int64_t H, double eps) {                                                                      \
    layer_norm_backward_impl<T, N>(g, x, w, gx, pw, pb, rows, H, eps);                                            \
  }                                                                                                               \
  MYNS_LN_REGS(r1_##suffix, T, N, 1)                                                                              \
  MYNS_LN_REGS(r2_##suffix, T, N, 2)                                                                              \
  MYNS_LN_R4(r4_##suffix, T, N)                                                                                   \
  MYNS_LN_BACKWARD_REGS(r1_##suffix, T, N, 1)                                                                     \
  MYNS_LN_BACKWARD_REGS(r2_##suffix, T, N, 2)
#define MYNS_LN_REGS(suffix, T, N, C)                                                                             \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS layer_norm_##suffix(const T* x, const T* w, const T* b, T* y,   \
                                                                      int64_t rows, int64_t H, double eps) {      \
    myns::with_full<N, C>(H, [&](auto full) {                                                                     \
      layer_norm_regs_impl<T, N, C, decltype(full)::value>(x, w, b, y, rows, H, eps);                             \
    });                                                                                                           \
  }
// Four packs per thread in at most 32 registers (layer_norm_r4_impl).
#define MYNS_LN_R4(suffix, T, N)                                                                                  \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS_FULL layer_norm_##suffix(const T* x, const T* w, const T* b,    \
                                                                           T* y, int64_t rows, int64_t H,       \
                                                                           double eps) {                        \
    layer_norm_r4_impl<T, N>(x, w, b, y, rows, H, eps);                                                           \
  }
// 512 threads at most (the general builds' bound): the partial sums take registers.
#define MYNS_LN_BACKWARD_REGS(suffix, T, N, C)                                                                    \
  extern "C" __global__ void MYNS_ROW_BACKWARD_REGS_BOUNDS(C) layer_norm_backward_##suffix(                       \
      const T* g, const T* x, const T* w, T* gx, typename Acc<T>::type* pw, typename Acc<T>::type* pb,            \
      int64_t rows, int64_t H, double eps) {                                                                      \
    myns::with_full<N, C>(H, [&](auto full) {                                                                     \
      layer_norm_backward_regs_impl<T, N, C, decltype(full)::value>(g, x, w, gx, pw, pb, rows, H, eps);           \
    });                                                                                                           \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_LN)
MYNS_COLUMN_SUM(layer_norm)
