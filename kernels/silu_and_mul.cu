// SwiGLU: out = silu(a) * b for x = [a, b] (see gated.cuh), and its gradient.
#include "gated.cuh"

// silu(a) = a sig(a); silu'(a) = sig(a) (1 + a (1 - sig(a))).
struct Silu {
  template <typename A>
  static __device__ __forceinline__ A sigmoid(A v) { return myns::fast_rcp(A(1) + myns::fast_exp(-v)); }
  template <typename A>
  __device__ __forceinline__ A value(A a) const { return a * sigmoid(a); }
  template <typename A>
  __device__ __forceinline__ void both(A a, A& value, A& slope) const {
    const A s = sigmoid(a);
    value = a * s;
    slope = s * (A(1) + a * (A(1) - s));
  }
};

#define MYNS_SILU(suffix, T, N)                                                                        \
  extern "C" __global__ void silu_and_mul_##suffix(const T* x, T* out, int64_t rows, int64_t d) {      \
    myns::gated_impl<Silu, T, N>(x, out, rows, d, Silu{});                                              \
  }                                                                                                    \
  extern "C" __global__ void silu_and_mul_backward_##suffix(const T* g, const T* x, T* gx, int64_t rows, \
                                                            int64_t d) {                              \
    myns::gated_backward_impl<Silu, T, N>(g, x, gx, rows, d, Silu{});                                  \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_SILU)
