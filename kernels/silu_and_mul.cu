// SwiGLU: x = [a, b] on the last dimension (each d wide), out = silu(a) * b,
// over contiguous [rows, 2d] -> [rows, d]. Threads x cover a row's packs,
// threads y several rows (short rows still fill a block); grid y loops over
// rows since it is capped at 65535.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

template <typename A>
__device__ __forceinline__ A sigmoid(A v) { return myns::fast_rcp(A(1) + myns::fast_exp(-v)); }

template <typename T, int N>
__device__ void silu_and_mul_impl(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t d) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t dv = d / N;
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= dv) return;
  const int64_t row_step = (int64_t)gridDim.y * blockDim.y;
  for (int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += row_step) {
    const P a = reinterpret_cast<const P*>(x + r * 2 * d)[i];
    const P b = reinterpret_cast<const P*>(x + r * 2 * d + d)[i];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const A av = to_acc(a.v[k]);
      o.v[k] = from_acc<T>(av * sigmoid(av) * to_acc(b.v[k]));
    }
    reinterpret_cast<P*>(out + r * d)[i] = o;
  }
}

// ga = g * b * sig(a) * (1 + a * (1 - sig(a))),  gb = g * silu(a).
template <typename T, int N>
__device__ void silu_and_mul_backward_impl(const T* __restrict__ g, const T* __restrict__ x, T* __restrict__ gx,
                                           int64_t rows, int64_t d) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const int64_t dv = d / N;
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= dv) return;
  const int64_t row_step = (int64_t)gridDim.y * blockDim.y;
  for (int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += row_step) {
    const P a = reinterpret_cast<const P*>(x + r * 2 * d)[i];
    const P b = reinterpret_cast<const P*>(x + r * 2 * d + d)[i];
    const P gg = reinterpret_cast<const P*>(g + r * d)[i];
    P oa, ob;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const A av = to_acc(a.v[k]), bv = to_acc(b.v[k]), gv = to_acc(gg.v[k]);
      const A s = sigmoid(av);
      oa.v[k] = from_acc<T>(gv * bv * s * (A(1) + av * (A(1) - s)));
      ob.v[k] = from_acc<T>(gv * av * s);
    }
    reinterpret_cast<P*>(gx + r * 2 * d)[i] = oa;
    reinterpret_cast<P*>(gx + r * 2 * d + d)[i] = ob;
  }
}

#define MYNS_SILU(suffix, T, N)                                                                        \
  extern "C" __global__ void silu_and_mul_##suffix(const T* x, T* out, int64_t rows, int64_t d) {      \
    silu_and_mul_impl<T, N>(x, out, rows, d);                                                          \
  }                                                                                                    \
  extern "C" __global__ void silu_and_mul_backward_##suffix(const T* g, const T* x, T* gx, int64_t rows, \
                                                            int64_t d) {                              \
    silu_and_mul_backward_impl<T, N>(g, x, gx, rows, d);                                               \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_SILU)
