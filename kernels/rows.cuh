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
  __shared__ A sh[32];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();  // earlier readers of sh are done
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < nw ? sh[lane] : A(0);
    v = warp_sum(v);
    if (lane == 0) sh[0] = v;
  }
  __syncthreads();
  return sh[0];
}

// Online softmax state: running max m and sum s of exp(x - m).
template <typename A>
struct MaxSum {
  A m, s;
};

template <typename A>
__device__ __forceinline__ MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  const A m = a.m > b.m ? a.m : b.m;
  // -inf maxima contribute nothing (and must not produce -inf - -inf = nan).
  const A sa = a.m == -INFINITY ? A(0) : a.s * exp(a.m - m);
  const A sb = b.m == -INFINITY ? A(0) : b.s * exp(b.m - m);
  return {m, sa + sb};
}

template <typename A>
__device__ __forceinline__ MaxSum<A> block_max_sum(MaxSum<A> v) {
  __shared__ MaxSum<A> sh[32];
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
    if (lane == 0) sh[0] = v;
  }
  __syncthreads();
  return sh[0];
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
