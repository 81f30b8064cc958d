// out = a + b over contiguous buffers of n elements; half types add in
// float32, integers wrap (as torch.add).
#include "elementwise.cuh"

template <typename T>
__device__ __forceinline__ T add_one(T x, T y) {
  return myns::from_acc<T>(myns::to_acc(x) + myns::to_acc(y));
}
template <>
__device__ __forceinline__ int32_t add_one(int32_t x, int32_t y) {
  return (int32_t)((uint32_t)x + (uint32_t)y);
}
template <>
__device__ __forceinline__ int64_t add_one(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x + (uint64_t)y);
}

#define MYNS_ADD(suffix, T)                                                                                  \
  extern "C" __global__ void __launch_bounds__(myns::EW_THREADS)                                            \
      add_##suffix(const T* a, const T* b, T* out, int64_t n, int vec) {                                    \
    myns::ew_map<false>(out, a, b, n, vec != 0, [](T x, T y) { return add_one<T>(x, y); });                       \
  }
MYNS_FOR_EACH_FLOAT(MYNS_ADD)
MYNS_FOR_EACH_INT(MYNS_ADD)
