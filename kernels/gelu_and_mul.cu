// GeGLU: out = gelu(a) * b for x = [a, b] (see gated.cuh), and its gradient,
// with gelu exact (erf; `tanh` = 0) or tanh-approximated (`tanh` = 1), as
// torch.nn.functional.gelu's `approximate`.
#include "gated.cuh"

struct Gelu {
  int tanh_approx;
  // erf form: gelu(a) = a Phi(a), gelu'(a) = Phi(a) + a phi(a).
  // tanh form: gelu(a) = a (1 + t) / 2 with t = tanh(y / 2), y = 2 k (a +
  // c a^3), taken as a sigmoid: (1 + t) / 2 = s = 1 / (1 + exp(-y)), and
  // gelu'(a) = s + a y' s (1 - s) with y' = 2 k (1 + 3 c a^2). One fast exp
  // and a reciprocal instead of tanhf, which made this op compute-bound
  // (H200: 0.92 of compiled at 8192 x 8192 bf16); more accurate too, as
  // 1 + t no longer cancels for negative a.
  template <typename A>
  static __device__ __forceinline__ void tanh_form(A a, A& s, A& one_minus_s, A& dy) {
    const A k2 = A(2 * 0.7978845608028654), c = A(0.044715);
    const A e = myns::fast_exp(-k2 * (a + c * a * a * a));
    s = myns::fast_rcp(A(1) + e);
    // 1 - s = e s; 1 when e is too large for the reciprocal (s = 0).
    one_minus_s = s == A(0) ? A(1) : e * s;
    dy = k2 * (A(1) + A(3) * c * a * a);
  }
  template <typename A>
  __device__ __forceinline__ void both(A a, A& value, A& slope) const {
    if (tanh_approx) {
      A s, om, dy;
      tanh_form(a, s, om, dy);
      value = a * s;
      // a s (1 - s) first: it is 0 for |a| far out (then a dy may overflow,
      // and inf * 0 would be NaN where the slope is 1 or 0).
      const A aso = a * s * om;
      slope = s + (aso == A(0) ? A(0) : aso * dy);
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
      A s, om, dy;
      tanh_form(a, s, om, dy);  // om and dy go unused (and uncomputed)
      return a * s;
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
