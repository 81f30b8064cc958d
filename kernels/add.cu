// Elementwise a + b over contiguous buffers of n elements.
#include "common.cuh"

template <typename T>
__device__ void add_impl(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int64_t n) {
  // 64-bit grid-stride loop: n may exceed 2^31 and the grid is capped.
  const int64_t stride = (int64_t)blockDim.x * gridDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = myns::from_acc<T>(myns::to_acc(a[i]) + myns::to_acc(b[i]));
  }
}

#define MYNS_ADD(suffix, T)                                                                 \
  extern "C" __global__ void add_##suffix(const T* a, const T* b, T* out, int64_t n) {      \
    add_impl<T>(a, b, out, n);                                                              \
  }
MYNS_FOR_EACH_FLOAT(MYNS_ADD)
