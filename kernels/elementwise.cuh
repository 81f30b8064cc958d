// Streaming elementwise kernels (add, scale): each thread issues U 16-byte
// loads per operand before it computes, so a block keeps U x 4 KB of each
// operand in flight; blocks stride over the buffer when it needs more than
// the grid the host launches. Unaligned buffers take the element loop.
#pragma once
#include "rows.cuh"

namespace myns {

constexpr int EW_THREADS = MYNS_EW_THREADS, EW_UNROLL = MYNS_EW_UNROLL;

// Integer types wrap on overflow, as PyTorch's do (unsigned arithmetic:
// signed overflow is undefined in C++).
template <typename T> struct Wrap { using U = T; };
template <> struct Wrap<int32_t> { using U = uint32_t; };
template <> struct Wrap<int64_t> { using U = uint64_t; };

// out[i] = f(a[i], b[i]) for n elements (UNARY: f(a[i], a[i]), b unread);
// `vec`: every buffer is 16-byte aligned, so packs of 16 bytes of In0 apply
// (N elements; the Out and In1 packs hold N elements too).
template <bool UNARY, typename Out, typename In0, typename In1, typename F>
__device__ __forceinline__ void ew_map(Out* __restrict__ out, const In0* __restrict__ a, const In1* __restrict__ b,
                                       int64_t n, bool vec, F f) {
  constexpr int N = 16 / sizeof(In0);
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t threads = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (vec) {
    using PA = Pack<In0, N>;
    using PB = Pack<In1, N>;
    using PO = Pack<Out, N>;
    const int64_t np = n / N;
    const int64_t step = threads * EW_UNROLL;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x * EW_UNROLL + threadIdx.x; base < np; base += step) {
      PA pa[EW_UNROLL];
      PB pb[EW_UNROLL];
#pragma unroll
      for (int u = 0; u < EW_UNROLL; ++u) {
        const int64_t i = base + (int64_t)u * blockDim.x;
        if (i < np) {
          pa[u] = reinterpret_cast<const PA*>(a)[i];
          if constexpr (!UNARY) pb[u] = reinterpret_cast<const PB*>(b)[i];
        }
      }
#pragma unroll
      for (int u = 0; u < EW_UNROLL; ++u) {
        const int64_t i = base + (int64_t)u * blockDim.x;
        if (i < np) {
          PO po;
#pragma unroll
          for (int k = 0; k < N; ++k) {
            if constexpr (UNARY) {
              po.v[k] = f(pa[u].v[k], pa[u].v[k]);
            } else {
              po.v[k] = f(pa[u].v[k], pb[u].v[k]);
            }
          }
          reinterpret_cast<PO*>(out)[i] = po;
        }
      }
    }
    done = np * N;
  }
  for (int64_t i = done + tid; i < n; i += threads) {
    if constexpr (UNARY) {
      out[i] = f(a[i], a[i]);
    } else {
      out[i] = f(a[i], b[i]);
    }
  }
}

}  // namespace myns

// Instantiates MACRO(suffix, type) for the integer types add and scale take.
#define MYNS_FOR_EACH_INT(MACRO) \
  MACRO(i32, int32_t)            \
  MACRO(i64, int64_t)
