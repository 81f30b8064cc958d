// Shared helpers for myns kernels: accumulation types and dtype-suffixed
// extern "C" entry points (the Rust side looks kernels up as `<name>_<dtype>`).
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace myns {

// Half types accumulate in float; float and double in themselves.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };

template <typename T> __device__ __forceinline__ typename Acc<T>::type to_acc(T x) { return x; }
template <> __device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_acc(typename Acc<T>::type x) { return x; }
template <> __device__ __forceinline__ __half from_acc<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

}  // namespace myns

// Instantiates MACRO(suffix, type) for every dtype myns supports.
#define MYNS_FOR_EACH_FLOAT(MACRO) \
  MACRO(f32, float)                \
  MACRO(f64, double)               \
  MACRO(f16, __half)               \
  MACRO(bf16, __nv_bfloat16)
