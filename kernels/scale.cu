// out = x * alpha over n contiguous elements (out may equal x: in place), as
// PyTorch's `x * alpha`: float types multiply in their accumulation type by
// alpha rounded to it; integer types by an integer alpha, wrapping; an
// integer x times a non-integral alpha gives float32 (`scale_<t>_f32`).
#include "elementwise.cuh"

using myns::Acc;

#define MYNS_SCALE(suffix, T)                                                                                \
  extern "C" __global__ void __launch_bounds__(myns::EW_THREADS)                                            \
      scale_##suffix(const T* x, T* out, int64_t n, double alpha, int vec) {                                \
    using A = typename Acc<T>::type;                                                                         \
    const A al = A(alpha);                                                                                   \
    myns::ew_map<true>(out, x, x, n, vec != 0, [al](T v, T) { return myns::from_acc<T>(myns::to_acc(v) * al); }); \
  }
MYNS_FOR_EACH_FLOAT(MYNS_SCALE)

#define MYNS_SCALE_INT(suffix, T)                                                                            \
  extern "C" __global__ void __launch_bounds__(myns::EW_THREADS)                                            \
      scale_##suffix(const T* x, T* out, int64_t n, int64_t alpha, int vec) {                               \
    using U = typename myns::Wrap<T>::U;                                                                     \
    const U al = (U)(T)alpha;                                                                                \
    myns::ew_map<true>(out, x, x, n, vec != 0, [al](T v, T) { return (T)((U)v * al); });                          \
  }                                                                                                          \
  extern "C" __global__ void __launch_bounds__(myns::EW_THREADS)                                            \
      scale_##suffix##_f32(const T* x, float* out, int64_t n, double alpha, int vec) {                      \
    const float al = (float)alpha;                                                                           \
    myns::ew_map<true>(out, x, x, n, vec != 0, [al](T v, T) { return (float)v * al; });                            \
  }
MYNS_FOR_EACH_INT(MYNS_SCALE_INT)
