// Helpers for row-wise kernels (norms, softmax): 16-byte vector packs and
// reductions over the threads of a row. blockDim.x is a multiple of 32 and at
// most MYNS_ROW_MAX_THREADS.
#pragma once
#include <type_traits>

#include "common.cuh"
#include "kernel_params.cuh"  // generated from src/kernel_params.rs

// Thread limits per block (the launch code uses the same table): the general
// row kernels, and the register-resident variants (`<op>_r1_*`, `<op>_r2_*`:
// one or two packs per thread, few registers).
#define MYNS_ROW_BOUNDS __launch_bounds__(MYNS_ROW_MAX_THREADS)
#define MYNS_ROW_REGS_BOUNDS __launch_bounds__(MYNS_ROW_REGS_MAX_THREADS)
// At most 32 registers, so 2048 threads fit on an SM: for register-resident
// kernels that need no more (softmax: 38 without the cap, which left a
// quarter of the SM's threads idle on long rows).
#define MYNS_ROW_REGS_BOUNDS_FULL __launch_bounds__(MYNS_ROW_REGS_MAX_THREADS, 2)
// The register-resident backward builds (at most 512 threads, the partial
// sums take registers): with one pack per thread, 1024 threads per SM (at
// most 64 registers), the blocks per SM rowwise::plan_block_regs sizes the
// grid by; the next row's packs, loaded ahead, took 80-84 unbounded.
#define MYNS_ROW_BACKWARD_REGS_BOUNDS(C) __launch_bounds__(MYNS_ROW_MAX_THREADS, (C) == 1 ? 2 : 1)

namespace myns {

// N elements moved as one load/store (N = 16 / sizeof(T) for the vector path).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Row kernels run either a block per row (blockDim.y == 1, any multiple of 32
// threads) or, for short rows, a warp per row with blockDim.y rows per block
// (so short rows still fill the SMs). Reductions are then warp-only.
__device__ __forceinline__ int64_t first_row() { return (int64_t)blockIdx.x * blockDim.y + threadIdx.y; }
__device__ __forceinline__ int64_t row_step() { return (int64_t)gridDim.x * blockDim.y; }

// kEveryWarp: in a block's reduction every warp reduces the warps' partials
// itself (cheap operators); otherwise warp 0 does and broadcasts its result
// (see row_reduce).
struct Sum {
  static constexpr bool kEveryWarp = true;
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
struct Max {
  static constexpr bool kEveryWarp = true;
  // fmax ignores a NaN operand; callers that must propagate NaN do so later.
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return fmax(a, b); }
};

__device__ __forceinline__ float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ double shfl_xor(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }

template <typename A, typename Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_xor(v, o));
  return v;
}

// Reduction over the threads sharing a row, returned to each of them.
// `identity` pads the warps a block does not have. With a cheap operator
// (Op::kEveryWarp) every warp reduces the warps' partials itself, the same
// butterfly on the same values (as each lane of a warp per row does), rather
// than waiting on a third barrier for warp 0's result: softmax and
// layer_norm at 1024 x 8192 bf16 ran 1-6% faster on the H100. The online
// softmax state's combine (two exps a step) keeps the broadcast: done by
// every warp it cost cross_entropy 4-9% (bench/explore/rowwise-gaps/README.md).
template <typename A, typename Op>
__device__ __forceinline__ A row_reduce(A v, Op op, A identity) {
  v = warp_reduce(v, op);
  if (blockDim.x == 32) return v;  // a warp per row
  // Slot 32 holds the broadcast result, so warp 0 never overwrites a slot it reads.
  __shared__ A sh[33];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads();  // earlier readers of sh are done
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  if constexpr (Op::kEveryWarp) {
    return warp_reduce(lane < nw ? sh[lane] : identity, op);
  } else {
    if (wid == 0) {
      v = warp_reduce(lane < nw ? sh[lane] : identity, op);
      if (lane == 0) sh[32] = v;
    }
    __syncthreads();
    return sh[32];
  }
}

template <typename A>
__device__ __forceinline__ A row_sum(A v) { return row_reduce(v, Sum{}, A(0)); }

// Per-block column sums of a backward kernel (grad_weight, grad_bias):
// `planes` rows of H accumulators in the launch's dynamic shared memory when
// it gave enough, laid out [plane][k][pack] so that a warp's updates of
// consecutive packs hit distinct banks, else the caller's zeroed global rows
// (`out[plane]`, [pack * N + k]) added into directly. The shared ones start
// at zero and go to `out` once, whole, at the end (`flush`).
template <typename A, int N, int Planes>
struct ColumnSums {
  A* at[Planes];
  int64_t hv;
  bool shared;

  __device__ __forceinline__ ColumnSums(A* const (&out)[Planes], int64_t H) : hv(H / N) {
    extern __shared__ __align__(16) unsigned char row_partials_smem[];
    uint32_t bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    shared = bytes >= (uint32_t)(Planes * H * sizeof(A));
#pragma unroll
    for (int p = 0; p < Planes; ++p) at[p] = shared ? reinterpret_cast<A*>(row_partials_smem) + p * H : out[p];
    if (shared) {
      for (int64_t i = threadIdx.x; i < Planes * H; i += blockDim.x) reinterpret_cast<A*>(row_partials_smem)[i] = A(0);
      __syncthreads();
    }
  }
  __device__ __forceinline__ A& operator()(int p, int64_t i, int k) { return at[p][shared ? k * hv + i : i * N + k]; }
  __device__ __forceinline__ void flush(A* const (&out)[Planes]) {
    if (!shared) return;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < Planes; ++p)
      for (int64_t i = threadIdx.x; i < hv; i += blockDim.x)
#pragma unroll
        for (int k = 0; k < N; ++k) out[p][i * N + k] = at[p][k * hv + i];
  }
};

// K sums reduced over a row together: one pair of barriers for all of them
// (the backward kernels' independent sums).
template <typename A, int K>
struct Sums {
  A v[K];
  __device__ __forceinline__ Sums operator+(const Sums& o) const {
    Sums r;
#pragma unroll
    for (int i = 0; i < K; ++i) r.v[i] = v[i] + o.v[i];
    return r;
  }
};
template <typename A, int K>
__device__ __forceinline__ Sums<A, K> shfl_xor(Sums<A, K> s, int o) {
#pragma unroll
  for (int i = 0; i < K; ++i) s.v[i] = shfl_xor(s.v[i], o);
  return s;
}
template <typename A, int K>
__device__ __forceinline__ Sums<A, K> row_sums(Sums<A, K> s) { return row_reduce(s, Sum{}, Sums<A, K>{}); }
template <typename A>
__device__ __forceinline__ A row_max(A v) { return row_reduce(v, Max{}, A(-INFINITY)); }

// exp and 1/x for the accumulation type: the fast hardware approximations in
// float (a few ulp in range, far below half/bfloat16 rounding; 1/x is 0 for
// |x| above 2^126, where the exact value is below float's normal range
// anyway), the exact ones in double.
__device__ __forceinline__ float fast_exp(float x) { return __expf(x); }
__device__ __forceinline__ double fast_exp(double x) { return exp(x); }
__device__ __forceinline__ float fast_rcp(float x) { return __fdividef(1.0f, x); }
__device__ __forceinline__ double fast_rcp(double x) { return 1.0 / x; }

// Element k of a pack in the accumulation type, read from the pack's 32-bit
// words for the 16-bit types. `Again`: through a volatile instruction, which
// the compiler must repeat where it stands. The four-pack builds (`r4`, at
// most 32 registers) convert an element again in each pass over the row
// instead of keeping 32 floats live across a reduction, which spilled;
// reading the words also keeps the loaded packs in 16 registers (nvcc split
// them into 32 16-bit ones). A float is read again through a move: without
// it the compiler kept layer_norm's x - mean live across a reduction (44
// bytes spilled).
template <bool Again, typename T, int N>
__device__ __forceinline__ typename Acc<T>::type pack_acc(const Pack<T, N>& p, int k) {
  if constexpr (sizeof(T) == 2 && N % 2 == 0) {  // whole words (not the 2-byte pack of the scalar builds)
    const uint32_t word = reinterpret_cast<const uint32_t*>(p.v)[k / 2];
    uint32_t bits;
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      // A bfloat16 is the high half of the float it widens to.
      if (Again && (k & 1)) {
        asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(bits) : "r"(word));
      } else if (Again) {
        asm volatile("shl.b32 %0, %1, 16;" : "=r"(bits) : "r"(word));
      } else {
        bits = (k & 1) ? (word & 0xffff0000u) : (word << 16);
      }
    } else if (Again && (k & 1)) {
      asm volatile("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=r"(bits) : "r"(word));
    } else if (Again) {
      asm volatile("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=r"(bits) : "r"(word));
    } else if (k & 1) {
      asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=r"(bits) : "r"(word));
    } else {
      asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=r"(bits) : "r"(word));
    }
    return __uint_as_float(bits);
  } else if constexpr (Again && std::is_same_v<T, float>) {
    float v;
    asm volatile("mov.b32 %0, %1;" : "=f"(v) : "f"(p.v[k]));
    return v;
  } else {
    return to_acc(p.v[k]);
  }
}

// Loads this thread's C packs of a row of n packs (pack c at threadIdx.x +
// c * blockDim.x), all issued before any is used; packs past the row's end
// are zero. FULL: the threads cover the row exactly (n == C * blockDim.x),
// so no pack needs a bounds check or a zero fill.
template <bool FULL, int C, typename P>
__device__ __forceinline__ void load_packs(P (&dst)[C], const P* __restrict__ src, int n) {
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    if (FULL) {
      dst[c] = src[i];
    } else {
      dst[c] = i < n ? src[i] : P{};
    }
  }
}

// Stores the packs load_packs read (those inside the row).
template <bool FULL, int C, typename P>
__device__ __forceinline__ void store_packs(P* __restrict__ dst, const P (&src)[C], int n) {
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int i = threadIdx.x + c * blockDim.x;
    if (FULL || i < n) dst[i] = src[c];
  }
}

// Whether a register-resident kernel of C packs per thread covers rows of
// H / N packs exactly: the usual case (power-of-two hidden sizes), which
// then runs without per-pack bounds checks (about a third of the
// instructions of a 16-element-per-thread softmax were those checks and the
// zero fills). Uniform over the launch.
// with_full<N, C>(H, f) calls f(std::true_type{}) on such rows, else
// f(std::false_type{}): `decltype(full)::value` is the FULL argument.
template <int N, int C, typename F>
__device__ __forceinline__ void with_full(int64_t H, F f) {
  if (H == (int64_t)N * C * blockDim.x) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

// Packs each thread keeps in registers between a row's two passes, so the
// row is read from memory once (rows longer than this re-read from cache).
constexpr int kCachedPacks = MYNS_ROW_CACHED_PACKS;

// Online softmax state: running max m and sum s of exp(x - m).
template <typename A>
struct MaxSum {
  A m, s;
};

template <typename A>
__device__ __forceinline__ MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  const A m = a.m > b.m ? a.m : b.m;
  // A state of -inf elements only (s == 0) contributes nothing (and must not
  // produce -inf - -inf = nan); one whose m is -inf because it saw only NaN
  // (s is NaN) must still poison the sum.
  const A sa = a.s == A(0) ? A(0) : a.s * fast_exp(a.m - m);
  const A sb = b.s == A(0) ? A(0) : b.s * fast_exp(b.m - m);
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
__device__ __forceinline__ MaxSum<A> shfl_xor(MaxSum<A> v, int o) {
  return {shfl_xor(v.m, o), shfl_xor(v.s, o)};
}
struct Combine {
  static constexpr bool kEveryWarp = false;
  template <typename A>
  __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const { return combine(a, b); }
};

template <typename A>
__device__ __forceinline__ MaxSum<A> row_max_sum(MaxSum<A> v) {
  return row_reduce(v, Combine{}, MaxSum<A>{-INFINITY, A(0)});
}

// Column sums of the backward kernels' per-block partials: out_y[c] = sum
// over p of partial[y, p, c] ([planes, parts, H] in the accumulation type,
// plane y = blockIdx.y: layer_norm's grad_weight and grad_bias), rounded once
// to T. One launch in place of aten's sum over the parts and the cast per
// plane (about 14 us for [528, 2048] floats on the H100, and two launches).
// Threads x take 32 adjacent columns (coalesced), threads y split the parts;
// shared memory adds the y partial sums in a fixed order (deterministic).
constexpr int kColumnSumThreadsY = MYNS_COLUMN_SUM_THREADS_Y;
template <typename T>
__device__ void column_sum_impl(const typename Acc<T>::type* __restrict__ partial, T* __restrict__ out0,
                                T* __restrict__ out1, int64_t parts, int64_t H) {
  using A = typename Acc<T>::type;
  __shared__ A sh[kColumnSumThreadsY][33];
  const int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.x;
  partial += (int64_t)blockIdx.y * parts * H;
  A acc = A(0);
  if (c < H) {
    for (int64_t p = threadIdx.y; p < parts; p += blockDim.y) acc += partial[p * H + c];
  }
  sh[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < H) {
    A s = A(0);
    for (int i = 0; i < (int)blockDim.y; ++i) s += sh[i][threadIdx.x];
    (blockIdx.y ? out1 : out0)[c] = from_acc<T>(s);
  }
}

}  // namespace myns

// `<prefix>_column_sum_<dtype>`: myns::column_sum_impl for every float dtype,
// launched by rowwise::sum_partials with blocks of (32, kColumnSumThreadsY) threads.
#define MYNS_COLUMN_SUM_ONE(prefix, suffix, T)                                                                 \
  extern "C" __global__ void __launch_bounds__(32 * myns::kColumnSumThreadsY)                                 \
      prefix##_column_sum_##suffix(const typename myns::Acc<T>::type* partial, T* out0, T* out1, int64_t parts,  \
                                   int64_t H) {                                                                \
    myns::column_sum_impl<T>(partial, out0, out1, parts, H);                                                   \
  }
#define MYNS_COLUMN_SUM(prefix)                    \
  MYNS_COLUMN_SUM_ONE(prefix, f32, float)          \
  MYNS_COLUMN_SUM_ONE(prefix, f64, double)         \
  MYNS_COLUMN_SUM_ONE(prefix, f16, __half)         \
  MYNS_COLUMN_SUM_ONE(prefix, bf16, __nv_bfloat16)

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
