// out = x * alpha over n contiguous elements (out may equal x: in place).
// Packs of N elements first, then the tail; 64-bit grid-stride loops.
#include "rows.cuh"

using myns::Acc;
using myns::from_acc;
using myns::Pack;
using myns::to_acc;

template <typename T, int N>
__device__ void scale_impl(const T* x, T* out, int64_t n, double alpha) {
  using A = typename Acc<T>::type;
  using P = Pack<T, N>;
  const A al = A(alpha);
  const int64_t nv = n / N;
  const int64_t stride = (int64_t)blockDim.x * gridDim.x;
  const int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t i = start; i < nv; i += stride) {
    const P p = reinterpret_cast<const P*>(x)[i];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(to_acc(p.v[k]) * al);
    reinterpret_cast<P*>(out)[i] = o;
  }
  for (int64_t i = nv * N + start; i < n; i += stride) out[i] = from_acc<T>(to_acc(x[i]) * al);
}

#define MYNS_SCALE(suffix, T, N)                                                          \
  extern "C" __global__ void scale_##suffix(const T* x, T* out, int64_t n, double alpha) { \
    scale_impl<T, N>(x, out, n, alpha);                                                   \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_SCALE)
