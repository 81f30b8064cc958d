// GeGLU: out = gelu(a) * b for x = [a, b] (see gated.cuh), and its gradient,
// with gelu exact (erf; `tanh` = 0) or tanh-approximated (`tanh` = 1), as
// torch.nn.functional.gelu's `approximate`.
#include "gated.cuh"

struct Gelu {
  int tanh_approx;
  // erf form: gelu(a) = a Phi(a), gelu'(a) = Phi(a) + a phi(a).
  // tanh form: gelu(a) = a (1 + t) / 2 with t = tanh(k (a + c a^3)),
  // gelu'(a) = (1 + t) / 2 + a (1 - t^2) k (1 + 3 c a^2) / 2.
  template <typename A>
  __device__ __forceinline__ void both(A a, A& value, A& slope) const {
    if (tanh_approx) {
      const A k = A(0.7978845608028654), c = A(0.044715);
      const A t = tanh(k * (a + c * a * a * a));
      value = A(0.5) * a * (A(1) + t);
      slope = A(0.5) * (A(1) + t) + A(0.5) * a * (A(1) - t * t) * k * (A(1) + A(3) * c * a * a);
    } else {
      const A phi = A(0.3989422804014327) * exp(A(-0.5) * a * a);
      const A cdf = A(0.5) * (A(1) + erf(a * A(0.7071067811865476)));
      value = a * cdf;
      slope = cdf + a * phi;
    }
  }
  template <typename A>
  __device__ __forceinline__ A value(A a) const {
    if (tanh_approx) {
      const A k = A(0.7978845608028654), c = A(0.044715);
      return A(0.5) * a * (A(1) + tanh(k * (a + c * a * a * a)));
    }
    return A(0.5) * a * (A(1) + erf(a * A(0.7071067811865476)));
  }
};

#define MYNS_GELU(suffix, T, N)                                                                              \
  extern "C" __global__ void gelu_and_mul_##suffix(const T* x, T* out, int64_t rows, int64_t d, int tanh_approx) { \
    myns::gated_impl<Gelu, T, N>(x, out, rows, d, Gelu{tanh_approx});                                        \
  }                                                                                                          \
  extern "C" __global__ void gelu_and_mul_backward_##suffix(const T* g, const T* x, T* gx, int64_t rows,     \
                                                            int64_t d, int tanh_approx) {                   \
    myns::gated_backward_impl<Gelu, T, N>(g, x, gx, rows, d, Gelu{tanh_approx});                             \
  }
MYNS_FOR_EACH_FLOAT_VEC(MYNS_GELU)
