// RMS norm over the last dimension of a contiguous [rows, H] buffer:
// y = x * rsqrt(mean(x^2) + eps) * w, accumulated in float (double for f64).
// A block or a warp per row (grid-strided); the row is read twice, the second time
// from cache, so DRAM traffic is one read and one write.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

template <typename T, int N>
__device__ void rms_norm_impl(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                              int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  constexpr int C = myns::kCachedPacks;
  const int64_t hv = H / N;
  const bool cached = hv <= (int64_t)C * blockDim.x;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    P* yp = reinterpret_cast<P*>(y + r * H);
    A ss = 0;
    P cache[C];
    if (cached) {
      // All loads first (independent, in flight together), then the math.
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
          for (int k = 0; k < N; ++k) { const A v = to_acc(cache[c].v[k]); ss += v * v; }
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i];
#pragma unroll
        for (int k = 0; k < N; ++k) { const A v = to_acc(p.v[k]); ss += v * v; }
      }
    }
    const A inv = rsqrt(myns::row_sum(ss) / A(H) + A(eps));
    if (cached) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = threadIdx.x + (int64_t)c * blockDim.x;
        if (i < hv) {
          const P q = wp[i];
          P o;
#pragma unroll
          for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(to_acc(cache[c].v[k]) * inv * to_acc(q.v[k]));
          yp[i] = o;
        }
      }
    } else {
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
        const P p = xp[i], q = wp[i];
        P o;
#pragma unroll
        for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(to_acc(p.v[k]) * inv * to_acc(q.v[k]));
        yp[i] = o;
      }
    }
  }
}

// The register-resident form (Rust launches it when each thread's share of a
// row is at most C packs, with one block or warp per row and no more): x and
// the weight are loaded together before the reduction, so small launches wait
// on memory once, and the code is short. At four packs (`r4`, at most 32
// registers) only x is held across the reduction and each weight pack is read
// (from cache) where it is used: x and w together would not fit, and 2048
// threads per SM put 1024 rows of 1024 packs (8192 bfloat16) in one wave.
template <typename T, int N, int C, bool FULL>
__device__ void rms_norm_regs_impl(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                   int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  constexpr bool kLateWeights = C > 2;
  const int64_t r = myns::first_row();
  if (r >= rows) return;  // a whole block (or warp) of rows past the end
  const int hv = (int)(H / N);
  const P* wp = reinterpret_cast<const P*>(w);
  P xs[C], ws[kLateWeights ? 1 : C];
  myns::load_packs<FULL>(xs, reinterpret_cast<const P*>(x + r * H), hv);
  if constexpr (!kLateWeights) myns::load_packs<FULL>(ws, wp, hv);
  A ss = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) { const A v = myns::pack_acc<false>(xs[c], k); ss += v * v; }
  }
  const A inv = rsqrt(myns::row_sum(ss) / A(H) + A(eps));
  P* yp = reinterpret_cast<P*>(y + r * H);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    if (!FULL && i >= hv) continue;
    const P q = kLateWeights ? wp[i] : ws[kLateWeights ? 0 : c];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(myns::pack_acc<kLateWeights>(xs[c], k) * inv * to_acc(q.v[k]));
    yp[i] = o;
  }
}

// s = x + residual (rounded to T); y = rms_norm(s) * w. Written to `s` and
// `y`, which may be `residual` and `x` themselves (fused_add_rms_norm, vLLM's
// in-place op; no __restrict__ for that reason: each thread reads an element
// before it writes it, and re-reads only elements it wrote itself). The norm
// uses the sum as stored (rounded to T), like the unfused sequence.
template <typename T, int N>
__device__ void add_rms_norm_impl(const T* x, const T* res, const T* __restrict__ w, T* y, T* sum, int64_t rows,
                                  int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t hv = H / N;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = myns::first_row(); r < rows; r += myns::row_step()) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    const P* rp = reinterpret_cast<const P*>(res + r * H);
    P* sp = reinterpret_cast<P*>(sum + r * H);
    P* yp = reinterpret_cast<P*>(y + r * H);
    A ss = 0;
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i], b = rp[i];
      P s;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        s.v[k] = from_acc<T>(to_acc(a.v[k]) + to_acc(b.v[k]));
        const A v = to_acc(s.v[k]);
        ss += v * v;
      }
      sp[i] = s;
    }
    const A inv = rsqrt(myns::row_sum(ss) / A(H) + A(eps));
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P s = sp[i], q = wp[i];
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(to_acc(s.v[k]) * inv * to_acc(q.v[k]));
      yp[i] = o;
    }
  }
}

// add_rms_norm in registers (see rms_norm_regs_impl): x, residual and the
// weight all loaded before the reduction.
template <typename T, int N, int C, bool FULL>
__device__ void add_rms_norm_regs_impl(const T* x, const T* res, const T* __restrict__ w, T* y, T* sum, int64_t rows,
                                       int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t r = myns::first_row();
  if (r >= rows) return;
  const int hv = (int)(H / N);
  P xs[C], rs[C], ws[C];
  myns::load_packs<FULL>(xs, reinterpret_cast<const P*>(x + r * H), hv);
  myns::load_packs<FULL>(rs, reinterpret_cast<const P*>(res + r * H), hv);
  myns::load_packs<FULL>(ws, reinterpret_cast<const P*>(w), hv);
  A ss = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      rs[c].v[k] = from_acc<T>(to_acc(xs[c].v[k]) + to_acc(rs[c].v[k]));
      const A v = to_acc(rs[c].v[k]);
      ss += v * v;
    }
  }
  myns::store_packs<FULL>(reinterpret_cast<P*>(sum + r * H), rs, hv);
  const A inv = rsqrt(myns::row_sum(ss) / A(H) + A(eps));
#pragma unroll
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int k = 0; k < N; ++k) xs[c].v[k] = from_acc<T>(to_acc(rs[c].v[k]) * inv * to_acc(ws[c].v[k]));
  }
  myns::store_packs<FULL>(reinterpret_cast<P*>(y + r * H), xs, hv);
}

// Gradients of y = x * r * w with r = rsqrt(mean(x^2) + eps):
//   gx = r * (g*w - xhat * mean(g*w*xhat)) [+ gs],  gw = sum over rows of g * xhat,
// where gs (may be null) is the gradient of add_rms_norm's sum output,
// which flows straight into gx.
// gw is accumulated per block (myns::ColumnSums: in shared memory when the
// launch gives H accumulators of it, else added into partial[blockIdx.x, H],
// zeroed by the caller) and summed over blocks afterwards: no atomics,
// deterministic. Accumulating in global memory after every row took 0.23 ms
// at 2048 x 16384 bfloat16 on the H100, three times the row traffic's time.
template <typename T, int N>
__device__ void rms_norm_backward_impl(const T* __restrict__ g, const T* __restrict__ x,
                                       const T* __restrict__ w, const T* __restrict__ gs, T* __restrict__ gx,
                                       typename Acc<T>::type* __restrict__ partial,
                                       int64_t rows, int64_t H, double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t hv = H / N;
  const P* wp = reinterpret_cast<const P*>(w);
  A* const out[1] = {partial + (int64_t)blockIdx.x * H};
  myns::ColumnSums<A, N, 1> gw(out, H);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const P* xp = reinterpret_cast<const P*>(x + r * H);
    const P* gp = reinterpret_cast<const P*>(g + r * H);
    P* op = reinterpret_cast<P*>(gx + r * H);
    myns::Sums<A, 2> s{};  // sum of x^2, sum of g * w * x
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i], b = gp[i], c = wp[i];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A v = to_acc(a.v[k]);
        s.v[0] += v * v;
        s.v[1] += to_acc(b.v[k]) * to_acc(c.v[k]) * v;
      }
    }
    s = myns::row_sums(s);
    const A rr = rsqrt(s.v[0] / A(H) + A(eps));
    const A mean_dot = s.v[1] * rr / A(H);  // mean(g*w*xhat)
    const P* sp = gs ? reinterpret_cast<const P*>(gs + r * H) : nullptr;
    for (int64_t i = threadIdx.x; i < hv; i += blockDim.x) {
      const P a = xp[i], b = gp[i], c = wp[i];
      P extra;
      if (sp) extra = sp[i];
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A xhat = to_acc(a.v[k]) * rr;
        const A gv = to_acc(b.v[k]);
        const A e = sp ? to_acc(extra.v[k]) : A(0);
        o.v[k] = from_acc<T>(rr * (gv * to_acc(c.v[k]) - xhat * mean_dot) + e);
        gw(0, i, k) += gv * xhat;
      }
      op[i] = o;
    }
  }
  gw.flush(out);
}

// The register-resident backward (as layer_norm's): this thread's C packs of
// every row it visits, loaded before the reductions, and its columns'
// grad_weight partial sums kept in registers across the block's rows, written
// once at the end. The general build above re-reads each row and adds into
// the partial in memory for every row: about 0.17 ms at 8192 x 2048 bf16 on
// the H100, against the 0.03 ms its traffic takes.
template <typename T, int N, int C, bool FULL>
__device__ void rms_norm_backward_regs_impl(const T* __restrict__ g, const T* __restrict__ x,
                                            const T* __restrict__ w, const T* __restrict__ gs, T* __restrict__ gx,
                                            typename Acc<T>::type* __restrict__ partial, int64_t rows, int64_t H,
                                            double eps) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int hv = (int)(H / N);
  P ws[C];
  myns::load_packs<FULL>(ws, reinterpret_cast<const P*>(w), hv);
  A aw[C][N];
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int k = 0; k < N; ++k) aw[c][k] = A(0);
  // With one pack per thread, the block's next row loads while this one is
  // reduced (with two, the second set of registers would spill).
  constexpr bool kPrefetch = C == 1;
  P xs[C], gp[C], es[C];
  const auto load = [&](int64_t row, P(&xd)[C], P(&gd)[C], P(&ed)[C]) {
    myns::load_packs<FULL>(xd, reinterpret_cast<const P*>(x + row * H), hv);
    myns::load_packs<FULL>(gd, reinterpret_cast<const P*>(g + row * H), hv);
    if (gs) myns::load_packs<FULL>(ed, reinterpret_cast<const P*>(gs + row * H), hv);
  };
  if (kPrefetch && blockIdx.x < rows) load(blockIdx.x, xs, gp, es);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    P nx[C], ng[C], ne[C];
    if (!kPrefetch) {
      load(r, xs, gp, es);
    } else if (r + gridDim.x < rows) {
      load(r + gridDim.x, nx, ng, ne);
    }
    myns::Sums<A, 2> s{};  // sum of x^2, sum of g * w * x
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A v = myns::pack_acc<false>(xs[c], k);
        s.v[0] += v * v;
        s.v[1] += myns::pack_acc<false>(gp[c], k) * myns::pack_acc<false>(ws[c], k) * v;
      }
    s = myns::row_sums(s);
    const A rr = rsqrt(s.v[0] / A(H) + A(eps));
    const A mean_dot = s.v[1] * rr / A(H);  // mean(g*w*xhat)
    P os[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const A xhat = myns::pack_acc<true>(xs[c], k) * rr, gv = myns::pack_acc<true>(gp[c], k);
        const A e = gs ? myns::pack_acc<true>(es[c], k) : A(0);
        os[c].v[k] = from_acc<T>(rr * (gv * myns::pack_acc<true>(ws[c], k) - xhat * mean_dot) + e);
        aw[c][k] += gv * xhat;
      }
    myns::store_packs<FULL>(reinterpret_cast<P*>(gx + r * H), os, hv);
    if (kPrefetch) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        xs[c] = nx[c];
        gp[c] = ng[c];
        if (gs) es[c] = ne[c];
      }
    }
  }
  A* pw = partial + (int64_t)blockIdx.x * H;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    if (FULL || i < hv) {
#pragma unroll
      for (int k = 0; k < N; ++k) pw[(int64_t)i * N + k] = aw[c][k];
    }
  }
}

#define MYNS_RMS(suffix, T, N)                                                                                        \
  extern "C" __global__ void MYNS_ROW_BOUNDS rms_norm_##suffix(const T* x, const T* w, T* y, int64_t rows, int64_t H, \
                                               double eps) {                                                          \
    rms_norm_impl<T, N>(x, w, y, rows, H, eps);                                                                       \
  }                                                                                                                   \
  extern "C" __global__ void MYNS_ROW_BOUNDS fused_add_rms_norm_##suffix(T* x, T* res, const T* w, int64_t rows,      \
                                                         int64_t H, double eps) {                                     \
    add_rms_norm_impl<T, N>(x, res, w, x, res, rows, H, eps);                                                         \
  }                                                                                                                   \
  extern "C" __global__ void MYNS_ROW_BOUNDS add_rms_norm_##suffix(const T* x, const T* res, const T* w, T* y, T* s,  \
                                                                   int64_t rows, int64_t H, double eps) {             \
    add_rms_norm_impl<T, N>(x, res, w, y, s, rows, H, eps);                                                           \
  }                                                                                                                   \
  extern "C" __global__ void MYNS_ROW_BOUNDS rms_norm_backward_##suffix(const T* g, const T* x, const T* w,           \
                                                        const T* gs, T* gx, typename Acc<T>::type* partial,           \
                                                        int64_t rows, int64_t H, double eps) {                        \
    rms_norm_backward_impl<T, N>(g, x, w, gs, gx, partial, rows, H, eps);                                             \
  }                                                                                                                   \
  MYNS_RMS_REGS(r1_##suffix, T, N, 1)                                                                                 \
  MYNS_RMS_REGS(r2_##suffix, T, N, 2)                                                                                 \
  MYNS_RMS_R4(r4_##suffix, T, N)                                                                                      \
  MYNS_RMS_BACKWARD_REGS(r1_##suffix, T, N, 1)                                                                        \
  MYNS_RMS_BACKWARD_REGS(r2_##suffix, T, N, 2)
#define MYNS_RMS_REGS(suffix, T, N, C)                                                                                \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS rms_norm_##suffix(const T* x, const T* w, T* y, int64_t rows,       \
                                                                    int64_t H, double eps) {                          \
    myns::with_full<N, C>(H, [&](auto full) { rms_norm_regs_impl<T, N, C, decltype(full)::value>(x, w, y, rows, H, eps); }); \
  }                                                                                                                   \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS fused_add_rms_norm_##suffix(T* x, T* res, const T* w, int64_t rows, \
                                                                              int64_t H, double eps) {                \
    myns::with_full<N, C>(H, [&](auto full) {                                                                         \
      add_rms_norm_regs_impl<T, N, C, decltype(full)::value>(x, res, w, x, res, rows, H, eps);                        \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS add_rms_norm_##suffix(const T* x, const T* res, const T* w, T* y,   \
                                                                        T* s, int64_t rows, int64_t H, double eps) {  \
    myns::with_full<N, C>(H, [&](auto full) {                                                                         \
      add_rms_norm_regs_impl<T, N, C, decltype(full)::value>(x, res, w, y, s, rows, H, eps);                          \
    });                                                                                                               \
  }
// rms_norm only (its general build takes 63 registers on bfloat16 rows, half
// the SM's threads): four packs per thread in at most 32 registers, for rows
// the threads cover exactly (H == 4 N blockDim.x; rowwise::plan_reduce picks
// it for no other), so the bounds-checked form, which spilled, is not built.
#define MYNS_RMS_R4(suffix, T, N)                                                                                     \
  extern "C" __global__ void MYNS_ROW_REGS_BOUNDS_FULL rms_norm_##suffix(const T* x, const T* w, T* y, int64_t rows,  \
                                                                         int64_t H, double eps) {                     \
    rms_norm_regs_impl<T, N, 4, true>(x, w, y, rows, H, eps);                                                         \
  }
// 512 threads at most (the general builds' bound): the partial sums take registers.
#define MYNS_RMS_BACKWARD_REGS(suffix, T, N, C)                                                                       \
  extern "C" __global__ void MYNS_ROW_BACKWARD_REGS_BOUNDS(C) rms_norm_backward_##suffix(                             \
      const T* g, const T* x, const T* w, const T* gs, T* gx, typename Acc<T>::type* partial, int64_t rows,           \
      int64_t H, double eps) {                                                                                        \
    myns::with_full<N, C>(H, [&](auto full) {                                                                         \
      rms_norm_backward_regs_impl<T, N, C, decltype(full)::value>(g, x, w, gs, gx, partial, rows, H, eps);            \
    });                                                                                                               \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_RMS)
MYNS_COLUMN_SUM(rms_norm)
