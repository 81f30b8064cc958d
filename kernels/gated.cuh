// Gated activations: x = [a, b] on the last dimension (each d wide),
// out = act(a) * b over contiguous [rows, 2d] -> [rows, d], and the
// gradient gx = [g * b * act'(a), g * act(a)] (which may overwrite x).
// Threads x cover a row's packs, threads y several rows (short rows still
// fill a block); grid y loops over rows since it is capped at 65535. `Act`
// gives `value(a)` and `both(a, &value, &slope)` in the accumulation type.
#pragma once
#include "rows.cuh"

namespace myns {

template <typename Act, typename T, int N>
__device__ void gated_impl(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t d, Act act) {
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
    for (int k = 0; k < N; ++k) o.v[k] = from_acc<T>(act.value(to_acc(a.v[k])) * to_acc(b.v[k]));
    reinterpret_cast<P*>(out + r * d)[i] = o;
  }
}

// gx may be x (the gradient written over the input: each thread reads a
// pair before it writes it), so only g is __restrict__.
template <typename Act, typename T, int N>
__device__ void gated_backward_impl(const T* __restrict__ g, const T* x, T* gx,
                                    int64_t rows, int64_t d, Act act) {
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
      A value, slope;
      act.both(av, value, slope);
      oa.v[k] = from_acc<T>(gv * bv * slope);
      ob.v[k] = from_acc<T>(gv * value);
    }
    reinterpret_cast<P*>(gx + r * 2 * d)[i] = oa;
    reinterpret_cast<P*>(gx + r * 2 * d + d)[i] = ob;
  }
}

}  // namespace myns
