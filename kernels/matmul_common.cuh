// Shared pieces of the matmul/bmm kernels: the launch parameters (mirrored by
// `GemmParams` in src/ops/matmul.rs, field for field), tile rasterisation, the
// epilogue store, and PTX wrappers (cp.async, ldmatrix, mma.sync).
#pragma once
#include "common.cuh"

namespace myns {

// c[b][m][n] = sum_k a[b][m][k] * b[b][k][n], every stride in elements.
// Every field is 8 bytes so the C and Rust layouts cannot drift.
struct GemmParams {
  const void* a;
  const void* b;
  void* c;
  float* ws;         // split-K partials (splits > 1): [batch][splits][M][N] float32; the Hopper kernels: see `flags`
  int64_t M, N, K;
  int64_t sam, sak;  // a strides (m, k)
  int64_t sbk, sbn;  // b strides (k, n)
  int64_t scm, scn;  // c strides (m, n)
  int64_t sab, sbb, scb;  // batch strides of a, b, c
  int64_t batch;
  int64_t splits;    // K is cut into `splits` ranges of `k_chunk` (a multiple of the tile's K)
  int64_t k_chunk;
  int* flags;        // split-K on the Hopper kernels: arrivals per (tile, consumer), zeroed before the launch;
                     // `ws` then holds each split's partial tile in the consumers' register order
  int64_t beta;      // 1: c += a @ b (each old element read and added before the one rounding; the Hopper kernels' TMA stores: see src/gemm/mod.rs run_cuda_accumulate); 0: c = a @ b
  int64_t tma_store; // Hopper cooperative 16-bit kernels: the output goes through shared memory, then TMA (1: tmC) or the warps, rows shifted to their alignment (2)
  int64_t kcl;       // Hopper cooperative kernels: 1, or 2 or 4 blocks of a cluster each over one of a tile's K ranges (`k_chunk` each), summed through distributed shared memory
  int64_t share_a;   // Hopper cooperative kernels in clusters of 2: the pair's tiles sit side by side and share A's tile (else one above the other, sharing B's)
};

// Tile (tm, tn) of block `pid`: groups of 8 tile rows are walked column by
// column so that neighbouring blocks share A and B tiles in L2.
__device__ __forceinline__ void tile_of(int64_t pid, int64_t tiles_m, int64_t tiles_n, int64_t& tm, int64_t& tn) {
  constexpr int64_t G = 8;
  const int64_t per_group = G * tiles_n;
  const int64_t group = pid / per_group;
  const int64_t first = group * G;
  const int64_t rows = min(tiles_m - first, G);
  const int64_t r = pid - group * per_group;
  tm = first + r % rows;
  tn = r / rows;
}

// tile_of in 32 bits, for the Hopper kernel's work items (runtime 64-bit
// divisions are long software sequences). A template serving both changed
// the CUDA-core kernel's code generation (other loads and registers), so
// the two stay separate.
__device__ __forceinline__ void tile_of32(uint32_t pid, uint32_t tiles_m, uint32_t tiles_n, uint32_t& tm, uint32_t& tn) {
  constexpr uint32_t G = 8;
  const uint32_t per_group = G * tiles_n;
  const uint32_t group = pid / per_group;
  const uint32_t first = group * G;
  const uint32_t rows = min(tiles_m - first, G);
  const uint32_t r = pid - group * per_group;
  tm = first + r % rows;
  tn = r / rows;
}

template <typename T> struct Pair;
template <> struct Pair<__half> { using type = __half2; static __device__ __forceinline__ __half2 make(float x, float y) { return __floats2half2_rn(x, y); } };
template <> struct Pair<__nv_bfloat16> { using type = __nv_bfloat162; static __device__ __forceinline__ __nv_bfloat162 make(float x, float y) { return __floats2bfloat162_rn(x, y); } };
template <> struct Pair<float> { using type = float2; static __device__ __forceinline__ float2 make(float x, float y) { return make_float2(x, y); } };

// Stores two horizontally adjacent results (row r, columns n and n + 1) of
// an M x N output with strides (scm, scn): one paired store when both are in
// range and the pair is aligned, element stores otherwise. `acc`: add the
// elements already there first (c += a @ b, rounded once).
template <typename T>
__device__ __forceinline__ void store2(T* c, int64_t r, int64_t n, float v0, float v1, int64_t M, int64_t N,
                                       int64_t scm, int64_t scn, bool paired, bool acc = false) {
  if (r >= M) return;
  T* p = c + r * scm + n * scn;
  if (acc) {
    if (n < N) v0 += to_acc(p[0]);
    if (n + 1 < N) v1 += to_acc(p[scn]);
  }
  if (paired && n + 1 < N) {
    *reinterpret_cast<typename Pair<T>::type*>(p) = Pair<T>::make(v0, v1);
  } else {
    if (n < N) p[0] = from_acc<T>(v0);
    if (n + 1 < N) p[scn] = from_acc<T>(v1);
  }
}

// ---- PTX wrappers -----------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy; bytes past `src_bytes` (0..16) are zero-filled
// and never read.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
// 4-byte global->shared copy (zero-filled when `src_bytes` is 0), for
// tiles transposed on their way into shared memory.
__device__ __forceinline__ void cp_async4(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a @ b for one m16n8k16 (half types) or m16n8k8 (tf32) tile.
template <typename T> struct Mma;
template <> struct Mma<__half> {
  static constexpr int K = 16;
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct Mma<__nv_bfloat16> {
  static constexpr int K = 16;
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct Mma<float> {  // tf32 inputs (rounded by to_tf32), f32 accumulate
  static constexpr int K = 8;
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// d += a @ b for one m16n8k8 in float64 (compute capability 9.0: that shape
// is sm_90's; the kernels that call it are launched only there). The
// fragments sit where the tf32 m16n8k8 ones do, as doubles.
struct Dmma {
  static constexpr int K = 8;
  static __device__ __forceinline__ void run(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    __trap();
#endif
  }
};

// float32 rounded to TF32 to nearest, ties to even: as the Hopper kernels'
// TMA loads round (bench/explore/tf32-tma/), so that every TF32 path gives
// the same result (an autograd graph may take another path than eager).
__device__ __forceinline__ uint32_t to_tf32(float x) {
#if __CUDA_ARCH__ >= 900
  uint32_t r;
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  uint32_t u = __float_as_uint(x);
  if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;  // finite
  else if (u & 0x7FFFFFu) u = 0x7FFFE000u;  // NaN, as the TMA loads give it
  return u;
#endif
}

// Thread-block clusters (compute capability 9.0 and newer; the kernels
// that call these are built for it): this block's rank, the cluster's size
// (1 outside a cluster launch), and a barrier over every thread of every
// block of the cluster that orders what came before it (shared-memory
// writes, barrier initialisation, remote arrivals) with what comes after.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}
// Distributed shared memory: what block `cta` of the cluster holds at
// shared-memory address `addr` (an address in this block's window; mapa
// maps it to the peer's): a float, or four floats at a 16-byte aligned one.
__device__ __forceinline__ float ld_cluster(uint32_t addr, uint32_t cta) {
  float v;
  asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %1, %2;\nld.shared::cluster.f32 %0, [r];\n}\n" : "=f"(v) : "r"(addr), "r"(cta) : "memory");
  return v;
}
__device__ __forceinline__ float4 ld_cluster4(uint32_t addr, uint32_t cta) {
  float4 v;
  asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %4, %5;\nld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [r];\n}\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr), "r"(cta)
               : "memory");
  return v;
}

}  // namespace myns
