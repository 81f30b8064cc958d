// Helpers for row-wise kernels (norms, softmax): 16-byte vector packs and
// block-wide reductions. A block handles whole rows; blockDim.x is a multiple
// of 32 and at most 1024.
#pragma once
#include "common.cuh"

namespace myns {

// N elements moved as one load/store (N = 16 / sizeof(T) for the vector path).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block, returned to every thread.
template <typename A>
__device__ __forceinline__ A block_sum(A v) {
  // Slot 32 holds the result, so warp 0 never overwrites a slot it reads.
  __shared__ A sh[33];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();  // earlier readers of sh are done
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < nw ? sh[lane] : A(0);
    v = warp_sum(v);
    if (lane == 0) sh[32] = v;
  }
  __syncthreads();
  return sh[32];
}

// exp for the accumulation type: the fast hardware approximation in float
// (relative error ~1e-7 in range, far below half/bfloat16 rounding and within
// float32's), the exact one in double.
__device__ __forceinline__ float fast_exp(float x) { return __expf(x); }
__device__ __forceinline__ double fast_exp(double x) { return exp(x); }
__device__ __forceinline__ float fast_rcp(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double fast_rcp(double x) { return 1.0 / x; }

// Packs each thread keeps in registers between a row's two passes, so the
// row is read from memory once (rows longer than this re-read from cache).
constexpr int kCachedPacks = 4;

// Online softmax state: running max m and sum s of exp(x - m).
template <typename A>
struct MaxSum {
  A m, s;
};

template <typename A>
__device__ __forceinline__ MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  const A m = a.m > b.m ? a.m : b.m;
  // -inf maxima contribute nothing (and must not produce -inf - -inf = nan).
  const A sa = a.m == -INFINITY ? A(0) : a.s * fast_exp(a.m - m);
  const A sb = b.m == -INFINITY ? A(0) : b.s * fast_exp(b.m - m);
  return {m, sa + sb};
}

// Adds one element to a thread's running state (one exp per element).
template <typename A>
__device__ __forceinline__ void push(MaxSum<A>& st, A v) {
  if (v > st.m) {
    st.s = st.s * fast_exp(st.m - v) + A(1);  // st.m = -inf gives 0 * 0 + 1
    st.m = v;
  } else if (v != -INFINITY) {
    st.s += fast_exp(v - st.m);  // NaN propagates
  }
}

template <typename A>
__device__ __forceinline__ MaxSum<A> block_max_sum(MaxSum<A> v) {
  __shared__ MaxSum<A> sh[33];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum<A> other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = combine(v, other);
  }
  __syncthreads();
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < nw ? sh[lane] : MaxSum<A>{-INFINITY, A(0)};
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      MaxSum<A> other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
      v = combine(v, other);
    }
    if (lane == 0) sh[32] = v;
  }
  __syncthreads();
  return sh[32];
}

}  // namespace myns

// Instantiates MACRO(suffix, T, N) for every dtype, vector ("vec", 16-byte
// packs) and scalar ("scalar", one element) variants. Rust picks "vec" when
// pointers are 16-byte aligned and rows are whole packs.
#define MYNS_FOR_EACH_FLOAT_VEC(MACRO)  \
  MACRO(vec_f32, float, 4)              \
  MACRO(vec_f64, double, 2)             \
  MACRO(vec_f16, __half, 8)             \
  MACRO(vec_bf16, __nv_bfloat16, 8)     \
  MACRO(scalar_f32, float, 1)           \
  MACRO(scalar_f64, double, 1)          \
  MACRO(scalar_f16, __half, 1)          \
  MACRO(scalar_bf16, __nv_bfloat16, 1)
