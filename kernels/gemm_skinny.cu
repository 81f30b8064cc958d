// myns-arch: sm_90
// Skinny products: out[m][n] = sum_k x[m][k] w(k, n) for at most 16 rows m
// (decode; src/gemm runs N <= 16 as c^T = b^T a^T), where the weights w are
// streamed from memory once and the time is that of reading them. mma.sync
// m16n8k16 computes out^T = w^T x^T: the weights are the A operand, loaded
// straight from global memory into fragment registers with 16-byte loads
// (many in flight per thread, no shared-memory staging), x is the B operand
// (8 rows of m per mma, one or two mmas). K-major weights (w[n][k]) give
// fragments directly (the k order inside an mma is free, as long as x uses
// the same); N-major weights (w[k][n]) are paired along k with byte permutes.
//
// Block: 8 warps on one strip of 64 columns n, splitting the block's K range
// among them; the blocks of a thread-block cluster (1 to 8, along grid y)
// split K further and reduce through distributed shared memory, so the whole
// product is one launch with no workspace. float32 uses the same blocks,
// loads and reduction with FFMA instead of mma (`skinny_f32`).
//
// The streaming build (`skinny_tma`, weights whose rows TMA can address):
// the same strips and mmas (float32: FFMA, or TF32 mma m16n8k8 where TF32
// is allowed) and the same cluster split of
// K (where src/gemm/plan.rs asks for one), but the weights and x arrive by TMA
// in a ring of shared-memory stages that one producer warp keeps full, so a
// steady 150 KB or so per SM is in flight where the register build's loads come
// in bursts (cuBLAS's decode kernels stream the same way; on the H100 with
// the L2 clean it reached 1.95 TB/s at M = 1 against 32 MB of 16-bit
// weights, the register build 1.72: bench/explore/skinny/README.md, runs 5
// and 8).
//
//   mm_skinny_<dt>_<w><v>_m<mt>(SkinnyParams)   dt: f16 | bf16 | f32;
//                                               w: k (w[n][k]) | n (w[k][n]);
//                                               v: v (16-byte aligned rows) | e (element loads);
//                                               mt: 1 (M <= 8) | 2 (M <= 16)
//   mm_skinny_tma_<dt>_<w>_m<mt>_s<stages>(tmW, tmX, SkinnyParams)   dt: f16 | bf16 | f32 | tf32 (tensor maps: src/gemm/skinny.rs);
//                                               mt: 1 | 2 | 4 | 8 (4, 8: M <= 32, 64; 16-bit types and TF32);
//                                               stages: 16 | 8 | 4 (8 m blocks: 8 | 4)
#include <cuda.h>

#include "matmul_common.cuh"
#include "gemm_tiles.h"
#include "tma.cuh"

namespace myns {
namespace skinny {

// Mirrors `SkinnyParams` in src/gemm/skinny.rs (every field 8 bytes).
struct SkinnyParams {
  const void* x;
  const void* w;
  void* c;
  int64_t M, N, K;
  int64_t sxm, sxb;       // x[m][k] at m * sxm + k: K-contiguous, rows 16-byte aligned
  int64_t sw, swb;        // w[n][k] at n * sw + k (K-major) or w[k][n] at k * sw + n
  int64_t scm, scn, scb;  // out[m][n] at m * scm + n * scn
  int64_t batch;
  int64_t k_chunk;        // K per block of a cluster (a multiple of 32; of a stage in the streaming build)
  int64_t beta;           // 1: c += x @ w (old element added before the one rounding)
};

// The K range [kb, ke) of cluster block `rank` (`p.k_chunk` each: the last
// one short, any past K empty) and its count of `step`-long steps.
struct KRange {
  int64_t kb, ke, steps;
};
__device__ __forceinline__ KRange k_range(const SkinnyParams& p, uint32_t rank, int64_t step) {
  const int64_t kb = rank * p.k_chunk, ke = min(p.K, kb + p.k_chunk);
  return {kb, ke, ke > kb ? (ke - kb + step - 1) / step : 0};
}

constexpr int WARPS = MYNS_SKINNY_WARPS, THREADS = WARPS * 32, NW = MYNS_SKINNY_NW;
static_assert(NW == 64, "the fragment maps below cover 64 columns per warp");
// The streaming build: TMA_CW consumer warps and one producer warp; STAGES
// stages of 128 bytes of k (one 128-byte swizzle atom: 64 k of 16-bit
// types, 32 of float32) by the strip's 64 n (8 KB of weights) and x's same
// k of 8 MT rows. Warp w consumes stages w, w + TMA_CW, ...: with the stages
// a multiple of the warps, each stage always has the same consumer, and no
// warp waits on a phase two ahead.
// (STAGES: 16, 8 or 4, so that one, two or three to four blocks fit on an
// SM: src/gemm/plan.rs `skinny_tma_plan` picks by the blocks.)
constexpr int TMA_CW = MYNS_SKINNY_TMA_CW, TMA_THREADS = (TMA_CW + 1) * 32;

// ---- PTX (replaced by tests/matmul_emulation/emu_skinny.h)
// (cluster_rank, cluster_size, cluster_sync, ld_cluster: matmul_common.cuh)
// Weights are read once: keep them out of L1.
__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) { return __byte_perm(a, b, sel); }
extern __shared__ __align__(16) float skinny_smem[];
__device__ __forceinline__ float* shared_base() { return skinny_smem; }
// (The streaming build's barriers and TMA copies: tma.cuh.)
// The weights' copies with an L2 evict_first policy: their lines are read
// once, so they go before dirty lines an earlier kernel left in L2, which
// would otherwise be written back while this kernel streams (on the H100
// after do_bench's zero-fill flush: 1.07-1.13x the copies without it from
// 32 to 117 MB, 0.97x on a 1 GB LM head; bench/explore/skinny/README.md,
// run 8).
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ void tma_load_hint(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2, uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "l"(pol)
      : "memory");
}
// Shared-memory loads ordered (memory clobber) before the stage's release.
__device__ __forceinline__ uint4 lds128(uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ uint2 lds64(uint32_t a) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ float lds32f(uint32_t a) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(a) : "memory");
  return v;
}
// This thread's reads of a stage come before the next TMA write into it:
// without this fence (and the clobbers above) some sums came out wrong on
// the H100 (bench/explore/skinny/run6.sh).
__device__ __forceinline__ void reads_before_async_writes() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// ---- end PTX

__device__ __forceinline__ uint32_t word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ float fword(const uint4& v, int i) { return __uint_as_float(word(v, i)); }

// `n` (0..8) elements of T from `p` as 8 packed 16-bit values, zeros after them.
template <typename T>
__device__ __forceinline__ uint4 load_elems(const T* p, int n, int64_t stride) {
  uint16_t e[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = i < n ? __ldg(reinterpret_cast<const unsigned short*>(p + i * stride)) : 0;
  return make_uint4(e[0] | (uint32_t)e[1] << 16, e[2] | (uint32_t)e[3] << 16, e[4] | (uint32_t)e[5] << 16,
                    e[6] | (uint32_t)e[7] << 16);
}

// Every warp's partial sums of the strip at n0 (batch z) are in `red`
// ([WARPS][MT * 8][NW]): sums them over the warps, then over the blocks of
// the cluster (each block storing its share), and stores them.
template <typename T, int MT, int NWARPS = WARPS, int NTHREADS = THREADS>
__device__ __forceinline__ void finish(const SkinnyParams& p, int64_t z, int64_t n0, uint32_t rank, uint32_t ranks) {
  float* red = shared_base();
  const int tid = threadIdx.x;
  const int64_t M = p.M, N = p.N;
  __syncthreads();
  constexpr int OUTS = MT * 8 * NW;
  for (int o = tid; o < OUTS; o += NTHREADS) {
    float s = 0.f;
#pragma unroll
    for (int v = 0; v < NWARPS; ++v) s += red[v * OUTS + o];
    red[o] = s;
  }
  T* c = static_cast<T*>(p.c) + z * p.scb;
  if (ranks == 1) {
    for (int o = tid; o < OUTS; o += NTHREADS) {
      const int64_t m = o / NW, n = n0 + o % NW;
      if (m < M && n < N) {
        T* q = c + m * p.scm + n * p.scn;
        *q = from_acc<T>(p.beta ? red[o] + to_acc(*q) : red[o]);
      }
    }
    __syncthreads();  // red is reused by the next batch
  } else {
    cluster_sync();
    // Block `rank` sums and stores its share of the strip's outputs.
    const int per = OUTS / static_cast<int>(ranks);
    for (int o = static_cast<int>(rank) * per + tid; o < static_cast<int>(rank + 1) * per; o += NTHREADS) {
      float s = 0.f;
      for (uint32_t q = 0; q < ranks; ++q) s += ld_cluster(smem_addr(red + o), q);
      const int64_t m = o / NW, n = n0 + o % NW;
      if (m < M && n < N) {
        T* q = c + m * p.scm + n * p.scn;
        *q = from_acc<T>(p.beta ? s + to_acc(*q) : s);
      }
    }
    cluster_sync();  // no block reuses or leaves its shared memory while others read it
  }
}

// One warp-step's mmas, shared by both builds. K-major weights: 8 loads
// (f, h) of 8 k each; physical k 8t + {0,1,2,3} are the mma's k 2t, 2t+1,
// 2t+8, 2t+9 in the first mma, 8t + {4..7} in the second; x (8 k per m
// block) matches.
template <typename T, int MT>
__device__ __forceinline__ void mma_step_k(float (&acc)[4][MT][4], const uint4 (&wv)[8], const uint4 (&xv)[MT]) {
#pragma unroll
  for (int f = 0; f < 4; ++f)
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const uint32_t a[4] = {word(wv[2 * f], 2 * q), word(wv[2 * f + 1], 2 * q), word(wv[2 * f], 2 * q + 1), word(wv[2 * f + 1], 2 * q + 1)};
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const uint32_t b[2] = {word(xv[mt], 2 * q), word(xv[mt], 2 * q + 1)};
        Mma<T>::run(acc[f][mt], a, b);
      }
    }
}
// N-major weights: 4 loads, k-rows 4t .. 4t + 3 of 8 columns each. Fragment
// f: rows g / g + 8 are columns 8g + 2f / + 1 (the low and high halves of
// word f); the mma's k 2t, 2t+1 / 2t+8, 2t+9 are k-rows 4t, 4t+1 / 4t+2,
// 4t+3; x's 4 k per m block in words x and y (X: uint4 or uint2).
template <typename T, int MT, typename X>
__device__ __forceinline__ void mma_step_n(float (&acc)[4][MT][4], const uint4 (&wv)[4], const X (&xv)[MT]) {
#pragma unroll
  for (int f = 0; f < 4; ++f) {
    const uint32_t a[4] = {prmt(word(wv[0], f), word(wv[1], f), 0x5410), prmt(word(wv[0], f), word(wv[1], f), 0x7632),
                           prmt(word(wv[2], f), word(wv[3], f), 0x5410), prmt(word(wv[2], f), word(wv[3], f), 0x7632)};
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const uint32_t b[2] = {xv[mt].x, xv[mt].y};
      Mma<T>::run(acc[f][mt], a, b);
    }
  }
}
// A warp's accumulators into its slice of `red` ([MT * 8][NW], for
// `finish`): accumulator e of (f, mt) is m = 8 mt + 2t + (e & 1), n as the
// loads map it.
template <bool W_K, int MT>
__device__ __forceinline__ void store_partials(float* mine, const float (&acc)[4][MT][4], int g, int t) {
#pragma unroll
  for (int f = 0; f < 4; ++f)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int m = 8 * mt + 2 * t + (e & 1);
        const int n = W_K ? 16 * f + 8 * (e >> 1) + g : 8 * g + 2 * f + (e >> 1);
        mine[m * NW + n] = acc[f][mt][e];
      }
}

// W_K: weights K-major (w[n][k]); VEC: 16-byte loads of them (else element
// loads, for rows that are not 16-byte aligned); MT: 8-row blocks of m.
template <typename T, bool W_K, bool VEC, int MT>
__device__ __forceinline__ void skinny_gemm(const SkinnyParams& p) {
  // A warp-step covers 64 n by KSTEP k: 8 (K-major) or 4 (N-major) 16-byte
  // loads per thread; U steps (16 loads, 8 KB per warp) are loaded before
  // any is used. (One block per SM is the launch bound: the plans make at
  // most about one block per SM unless the weights are wide, and then 8
  // warps of 16 loads in flight each still cover the memory latency; run 1
  // on the H100 with 8 loads per thread reached 1.6 TB/s on 32 MB.)
  constexpr int KSTEP = W_K ? 32 : 16, LOADS = W_K ? 8 : 4, U = W_K ? 2 : 4;
  float* red = shared_base();  // [WARPS][MT * 8][NW] partial sums, then [MT * 8][NW]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int64_t M = p.M, N = p.N, n0 = blockIdx.x * (int64_t)NW;
  const uint32_t rank = cluster_rank(), ranks = cluster_size();
  const auto [kb, ke, steps] = k_range(p, rank, KSTEP);

  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T* x = static_cast<const T*>(p.x) + z * p.sxb;
    const T* w = static_cast<const T*>(p.w) + z * p.swb;
    float acc[4][MT][4];
#pragma unroll
    for (int f = 0; f < 4; ++f)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[f][mt][e] = 0.f;

    for (int64_t s0 = warp; s0 < steps; s0 += WARPS * U) {
      uint4 wv[U][LOADS];
      uint4 xv[U][MT];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t k0 = kb + (s0 + u * WARPS) * KSTEP;
        const bool live = s0 + u * WARPS < steps;
        if constexpr (W_K) {
          // Load (f, h): row n0 + 16 f + 8 h + g, k0 + 8 t .. + 7.
          const int64_t kc = k0 + 8 * t;
          const int nk = live ? static_cast<int>(max((int64_t)0, min(ke - kc, (int64_t)8))) : 0;
#pragma unroll
          for (int i = 0; i < LOADS; ++i) {
            const int64_t n = n0 + 16 * (i / 2) + 8 * (i % 2) + g;
            const T* src = w + n * p.sw + kc;
            if (VEC && nk == 8 && n < N) wv[u][i] = ld_stream(src);
            else wv[u][i] = n < N ? load_elems(src, nk, 1) : make_uint4(0, 0, 0, 0);
          }
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            const int64_t m = 8 * mt + g;
            const T* src = x + m * p.sxm + kc;
            if (nk == 8 && m < M) xv[u][mt] = __ldg(reinterpret_cast<const uint4*>(src));
            else xv[u][mt] = m < M ? load_elems(src, nk, 1) : make_uint4(0, 0, 0, 0);
          }
        } else {
          // Load j: k-row k0 + 4 t + j, columns n0 + 8 g .. + 7.
          const int64_t nc = n0 + 8 * g;
          const int nn = static_cast<int>(max((int64_t)0, min(N - nc, (int64_t)8)));
#pragma unroll
          for (int j = 0; j < LOADS; ++j) {
            const int64_t k = k0 + 4 * t + j;
            const T* src = w + k * p.sw + nc;
            if (!live || k >= ke) wv[u][j] = make_uint4(0, 0, 0, 0);
            else if (VEC && nn == 8) wv[u][j] = ld_stream(src);
            else wv[u][j] = load_elems(src, nn, 1);
          }
          const int64_t kc = k0 + 4 * t;
          const int nk = live ? static_cast<int>(max((int64_t)0, min(ke - kc, (int64_t)4))) : 0;
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            const int64_t m = 8 * mt + g;
            const T* src = x + m * p.sxm + kc;
            if (nk == 4 && m < M) {
              const uint2 v = __ldg(reinterpret_cast<const uint2*>(src));
              xv[u][mt] = make_uint4(v.x, v.y, 0, 0);
            } else {
              xv[u][mt] = m < M ? load_elems(src, nk, 1) : make_uint4(0, 0, 0, 0);
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if constexpr (W_K) mma_step_k<T, MT>(acc, wv[u], xv[u]);
        else mma_step_n<T, MT>(acc, wv[u], xv[u]);
      }
    }
    store_partials<W_K, MT>(red + warp * (MT * 8 * NW), acc, g, t);
    finish<T, MT>(p, z, n0, rank, ranks);
  }
}

// The streaming build (see the top of this file): weights w (K-major box of
// 64 rows n by BK k, or N-major box of BK k-rows by 64 n; float32's 64 n are
// two boxes of 32, one swizzle atom wide each) and x (BK k by 8 MT rows) by
// TMA, 128-byte swizzle, edges past K, N and M filled with zeros; one block
// per strip and batch for each K range of a cluster (`p.k_chunk`, a whole
// number of stages, so that no block's boxes reach into the next range:
// only K's end is zero-filled), reduced as skinny_gemm's. The 16-bit
// consumer warps' mmas and fragment maps are skinny_gemm's, fed from shared
// memory; float32's are FFMA, lane l taking columns l and l + 32, or with
// TF32 (`TF32`, maps of element type TFLOAT32) mma m16n8k8. Shared
// memory: the warps' partial sums (`finish`), the stages from the next
// 1024-byte boundary, then the barriers.
template <typename T, bool W_K, int MT, int STAGES, bool TF32 = false>
__device__ __forceinline__ void skinny_tma(const CUtensorMap* tmW, const CUtensorMap* tmX, const SkinnyParams& p) {
  static_assert(STAGES % TMA_CW == 0, "stages are dealt to the consumer warps in turn");
  static_assert(!TF32 || std::is_same<T, float>::value, "TF32 is float32 on the tensor cores");
  constexpr bool F32 = std::is_same<T, float>::value, FFMA = F32 && !TF32;
  static_assert(!FFMA || MT <= 2, "FFMA consumers take at most 16 rows (src/gemm/tiles.rs skinny_tma_built)");
  constexpr int BK = 128 / static_cast<int>(sizeof(T)), W_BYTES = BK * NW * sizeof(T), X_BYTES = MT * 8 * 128, STAGE = W_BYTES + X_BYTES;
  const uint32_t raw = smem_addr(shared_base()) + TMA_CW * MT * 8 * NW * 4;
  const uint32_t base = (raw + 1023u) & ~1023u, bars = base + STAGES * STAGE;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  // 128-byte swizzle: 16-byte chunk c of row r of a tile.
  auto swz = [](int r, int c) { return static_cast<uint32_t>(r * 128 + ((c ^ (r & 7)) << 4)); };
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int n0 = static_cast<int>(blockIdx.x) * NW;
  const uint32_t rank = cluster_rank(), ranks = cluster_size();
  const auto [kb, ke, k_stages] = k_range(p, rank, BK);
  const int stages = static_cast<int>(k_stages);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 1);  // the stage's one consumer warp
    }
    mbar_init_fence();
  }
  __syncthreads();
  int done = 0;  // stages of earlier batches: the ring's position
  // A consumer warp's stages of this batch (every TMA_CW-th): waits for
  // each, runs `body` on it (weights at st, x at xs), gives it back to the
  // producer.
  auto consume = [&](auto&& body) {
    for (int i = warp; i < stages; i += TMA_CW) {
      const int it = done + i, s = it % STAGES;
      mbar_wait(full(s), (it / STAGES) & 1);
      const uint32_t st = base + s * STAGE;
      body(st, st + W_BYTES);
      reads_before_async_writes();
      __syncwarp();
      if (lane == 0) mbar_arrive(empty(s));
    }
  };
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z, done += stages) {
    const int zi = static_cast<int>(z);
    if (warp == TMA_CW) {
      if (lane == 0) {
        const uint64_t once = evict_first_policy();
        for (int i = 0; i < stages; ++i) {
          const int it = done + i, s = it % STAGES, round = it / STAGES, k = static_cast<int>(kb) + i * BK;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
          const uint32_t st = base + s * STAGE;
          mbar_expect_tx(full(s), STAGE);
          if constexpr (W_K) {
            tma_load_hint(st, tmW, full(s), k, n0, zi, once);
          } else {
            tma_load_hint(st, tmW, full(s), n0, k, zi, once);
            if constexpr (F32) tma_load_hint(st + W_BYTES / 2, tmW, full(s), n0 + 32, k, zi, once);
          }
          tma_load(st + W_BYTES, tmX, full(s), k, 0, zi);
        }
      }
      // Reconverged before finish's block barrier, which counts a warp per
      // arrival: lanes 1-31 there before lane 0 would count this warp twice.
      __syncwarp();
    } else if constexpr (FFMA) {
      constexpr int R = 8 * MT;
      float acc[2][R] = {};
      consume([&](uint32_t st, uint32_t xs) {
#pragma unroll 2
        for (int c = 0; c < BK / 4; ++c) {
          // k 4c .. 4c + 3 of columns lane and lane + 32.
          float w[2][4];
          if constexpr (W_K) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const uint4 v = lds128(st + swz(lane + 32 * h, c));
#pragma unroll
              for (int j = 0; j < 4; ++j) w[h][j] = fword(v, j);
            }
          } else {
            // Box h: k-rows of columns 32 h .. + 31; column lane in chunk lane / 4.
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int j = 0; j < 4; ++j) w[h][j] = lds32f(st + h * (W_BYTES / 2) + swz(4 * c + j, lane / 4) + 4 * (lane % 4));
          }
#pragma unroll
          for (int r = 0; r < R; ++r) {
            if (MT == 1 && r >= p.M) break;  // uniform, as in skinny_f32
            const uint4 x4 = lds128(xs + swz(r, c));
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              acc[0][r] = fmaf(w[0][j], fword(x4, j), acc[0][r]);
              acc[1][r] = fmaf(w[1][j], fword(x4, j), acc[1][r]);
            }
          }
        }
      });
      float* mine = shared_base() + warp * (R * NW);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        mine[r * NW + lane] = acc[0][r];
        mine[r * NW + lane + 32] = acc[1][r];
      }
    } else if constexpr (F32) {
      // TF32 (the tensor maps round both operands to nearest, ties to even):
      // mma m16n8k8, the weights' rows n 16 f + g / + 8 as A, x as B. The k
      // order inside an mma is free as long as x follows it; each k-step's 8 k
      // are chosen so that a warp's shared-memory loads hit distinct banks.
      float acc[4][MT][4] = {};
      consume([&](uint32_t st, uint32_t xs) {
        if constexpr (W_K) {
          // Thread (g, t) loads k 8t .. 8t + 7 (chunks 2t, 2t + 1) of rows
          // 16 f + 8 h + g and of x's rows, a chunk at a time (8 m blocks
          // of both would not fit the registers); the chunk's k-step j
          // takes the mma's k t and t + 4 from its words 2j and 2j + 1.
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            uint4 wv[4][2], xv[MT];
#pragma unroll
            for (int f = 0; f < 4; ++f)
#pragma unroll
              for (int h = 0; h < 2; ++h) wv[f][h] = lds128(st + swz(16 * f + 8 * h + g, 2 * t + c));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) xv[mt] = lds128(xs + swz(8 * mt + g, 2 * t + c));
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
              for (int f = 0; f < 4; ++f) {
                const uint32_t a[4] = {word(wv[f][0], 2 * j), word(wv[f][1], 2 * j), word(wv[f][0], 2 * j + 1), word(wv[f][1], 2 * j + 1)};
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                  const uint32_t b[2] = {word(xv[mt], 2 * j), word(xv[mt], 2 * j + 1)};
                  Mma<float>::run(acc[f][mt], a, b);
                }
              }
          }
        } else {
          // Two boxes of 32 n (box n / 32: k-rows of 32 n); k-step ks takes
          // the mma's k t and t + 4 from k-rows 8 ks + 2t and 8 ks + 2t + 1
          // (x: one 8-byte load), whose swizzles differ, so that the 32 lanes'
          // 4-byte loads fall in 32 banks.
          auto wl = [&](int n, int k) {
            return __float_as_uint(lds32f(st + (n / 32) * (W_BYTES / 2) + swz(k, n % 32 / 4) + 4 * (n % 4)));
          };
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
            uint2 xv[MT];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) xv[mt] = lds64(xs + swz(8 * mt + g, 2 * ks + t / 2) + (t & 1) * 8);
#pragma unroll
            for (int f = 0; f < 4; ++f) {
              const int n = 16 * f + g, k = 8 * ks + 2 * t;
              const uint32_t a[4] = {wl(n, k), wl(n + 8, k), wl(n, k + 1), wl(n + 8, k + 1)};
#pragma unroll
              for (int mt = 0; mt < MT; ++mt) {
                const uint32_t b[2] = {xv[mt].x, xv[mt].y};
                Mma<float>::run(acc[f][mt], a, b);
              }
            }
          }
        }
      });
      // Both layouts' accumulators: rows n = 16 f + 8 (e >> 1) + g.
      store_partials<true, MT>(shared_base() + warp * (MT * 8 * NW), acc, g, t);
    } else {
      float acc[4][MT][4] = {};
      consume([&](uint32_t st, uint32_t xs) {
        if constexpr (W_K) {
          // Two k-steps of 32; load (f, h): row 16 f + 8 h + g, k 32 ks + 8 t
          // .. + 7 (chunk 4 ks + t).
#pragma unroll
          for (int ks = 0; ks < 2; ++ks) {
            uint4 wv[8], xv[MT];
#pragma unroll
            for (int l = 0; l < 8; ++l) wv[l] = lds128(st + swz(16 * (l / 2) + 8 * (l % 2) + g, 4 * ks + t));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) xv[mt] = lds128(xs + swz(8 * mt + g, 4 * ks + t));
            mma_step_k<T, MT>(acc, wv, xv);
          }
        } else {
          // Four k-steps of 16; load j: k-row 16 ks + 4 t + j, columns 8 g ..
          // + 7 (chunk g); x row 8 mt + g, k 16 ks + 4 t .. + 3.
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
            uint4 wv[4];
            uint2 xv[MT];
#pragma unroll
            for (int j = 0; j < 4; ++j) wv[j] = lds128(st + swz(16 * ks + 4 * t + j, g));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) xv[mt] = lds64(xs + swz(8 * mt + g, 2 * ks + t / 2) + (t & 1) * 8);
            mma_step_n<T, MT>(acc, wv, xv);
          }
        }
      });
      store_partials<W_K, MT>(shared_base() + warp * (MT * 8 * NW), acc, g, t);
    }
    finish<T, MT, TMA_CW, TMA_THREADS>(p, z, n0, rank, ranks);
  }
}

// `n` (0..4) floats from `p` (element stride `stride`) as a 16-byte value, zeros after them.
__device__ __forceinline__ uint4 load_floats(const float* p, int n, int64_t stride) {
  uint32_t e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) e[i] = i < n ? __float_as_uint(__ldg(p + i * stride)) : 0u;
  return make_uint4(e[0], e[1], e[2], e[3]);
}

// float32 (whether or not TF32 is allowed: exact float32 costs nothing
// here, the time is the weights'): FFMA on CUDA cores, the weights streamed
// with 16-byte loads as above. A thread-step covers CT columns by 4 k; a
// warp's lanes are LN along n by LK along k, summed across the LK lanes at
// the end. K-major weights: CT rows of 16 bytes each, lanes along k fastest
// (coalesced along rows); N-major: 4 k-rows of 4 columns, lanes along n
// fastest. The accumulators (CT x 8 MT) stay at 64 or fewer.
// x: a warp-step needs R x KSTEP floats, at most one 16-byte piece per
// lane, loaded with the weights (so the two latencies overlap; loading each
// row's x where it is used left M = 16 at 0.35 TB/s on the H100) and passed
// on through the warp's own slice of `red`, unused until `finish`.
template <bool W_K, bool VEC, int MT>
__device__ __forceinline__ void skinny_f32(const SkinnyParams& p) {
  constexpr int R = 8 * MT, CT = W_K && MT == 1 ? 8 : 4, LN = NW / CT, LK = 32 / LN, KSTEP = 4 * LK;
  constexpr int LOADS = W_K ? CT : 4, U = 16 / LOADS;  // 16 weight loads in flight per thread
  constexpr int XP = R * LK;                            // 16-byte pieces of x per warp-step
  static_assert(LN * CT == NW && LN * LK == 32 && XP <= 32, "lanes cover the strip and x");
  static_assert(U * XP * 4 <= R * NW, "x staging fits the warp's slice of red");
  float* red = shared_base();
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int ln = W_K ? lane / LK : lane % LN, lk = W_K ? lane % LK : lane / LN;
  const int xr = lane / LK, xk = lane % LK;  // the piece of x this lane loads: row, k group
  const int64_t M = p.M, N = p.N, n0 = blockIdx.x * (int64_t)NW;
  const uint32_t rank = cluster_rank(), ranks = cluster_size();
  const auto [kb, ke, steps] = k_range(p, rank, KSTEP);
  float* mine = red + warp * (R * NW);
  uint4* xs = reinterpret_cast<uint4*>(mine);  // [U][R][LK]

  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const float* x = static_cast<const float*>(p.x) + z * p.sxb;
    const float* w = static_cast<const float*>(p.w) + z * p.swb;
    float acc[CT][R];
#pragma unroll
    for (int c = 0; c < CT; ++c)
#pragma unroll
      for (int r = 0; r < R; ++r) acc[c][r] = 0.f;

    for (int64_t s0 = warp; s0 < steps; s0 += WARPS * U) {
      uint4 wv[U][LOADS], xv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t k0 = kb + (s0 + u * WARPS) * KSTEP, kc = k0 + 4 * lk;
        const bool live = s0 + u * WARPS < steps;
        const int nk = live ? static_cast<int>(max((int64_t)0, min(ke - kc, (int64_t)4))) : 0;
        if constexpr (W_K) {
          // Load c: row n0 + c LN + ln, k kc .. kc + 3.
#pragma unroll
          for (int c = 0; c < CT; ++c) {
            const int64_t n = n0 + c * LN + ln;
            const float* src = w + n * p.sw + kc;
            if (VEC && nk == 4 && n < N) wv[u][c] = ld_stream(src);
            else wv[u][c] = n < N ? load_floats(src, nk, 1) : make_uint4(0, 0, 0, 0);
          }
        } else {
          // Load j: k-row kc + j, columns n0 + 4 ln .. + 3.
          const int64_t nc = n0 + 4 * ln;
          const int nn = static_cast<int>(max((int64_t)0, min(N - nc, (int64_t)4)));
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const float* src = w + (kc + j) * p.sw + nc;
            if (j >= nk) wv[u][j] = make_uint4(0, 0, 0, 0);
            else if (VEC && nn == 4) wv[u][j] = ld_stream(src);
            else wv[u][j] = load_floats(src, nn, 1);
          }
        }
        const int64_t xc = k0 + 4 * xk;
        const int nx = live ? static_cast<int>(max((int64_t)0, min(ke - xc, (int64_t)4))) : 0;
        const float* src = x + xr * p.sxm + xc;
        xv[u] = lane >= XP || xr >= M ? make_uint4(0, 0, 0, 0)
                : nx == 4             ? __ldg(reinterpret_cast<const uint4*>(src))
                                      : load_floats(src, nx, 1);
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (lane < XP) xs[u * XP + lane] = xv[u];
      __syncwarp();
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < R; ++r) {
          if (MT == 1 && r >= M) break;  // uniform: M = 1 spends an eighth of the FFMAs of 8 rows (on 16-row blocks the check cost more than it saved)
          const uint4 xr4 = xs[u * XP + r * LK + lk];
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int c = 0; c < CT; ++c)
              acc[c][r] = fmaf(W_K ? fword(wv[u][c], j) : fword(wv[u][j], c), fword(xr4, j), acc[c][r]);
        }
      __syncwarp();  // every lane has read this step's x before the next is stored
    }

    // Sum across the LK lanes of each column group; lane lk = 0 holds the warp's partials.
#pragma unroll
    for (int o = W_K ? 1 : LN; o < (W_K ? LK : 32); o *= 2)
#pragma unroll
      for (int c = 0; c < CT; ++c)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[c][r] += __shfl_xor_sync(0xffffffffu, acc[c][r], o);
    if (lk == 0) {
#pragma unroll
      for (int c = 0; c < CT; ++c)
#pragma unroll
        for (int r = 0; r < R; ++r) mine[r * NW + (W_K ? c * LN + ln : 4 * ln + c)] = acc[c][r];
    }
    finish<float, MT>(p, z, n0, rank, ranks);
  }
}

}  // namespace skinny
}  // namespace myns

using myns::skinny::SkinnyParams;

#define MYNS_SKINNY_ONE(dt, T, w, WK, v, VEC, MT)                                                      \
  extern "C" __global__ void __launch_bounds__(myns::skinny::THREADS, 1)                                \
      mm_skinny_##dt##_##w##v##_m##MT(const SkinnyParams p) {                                            \
    myns::skinny::skinny_gemm<T, WK, VEC, MT>(p);                                                       \
  }
#define MYNS_SKINNY_MT(dt, T, w, WK, v, VEC) MYNS_SKINNY_ONE(dt, T, w, WK, v, VEC, 1) MYNS_SKINNY_ONE(dt, T, w, WK, v, VEC, 2)
#define MYNS_SKINNY(dt, T)                         \
  MYNS_SKINNY_MT(dt, T, k, true, v, true)          \
  MYNS_SKINNY_MT(dt, T, k, true, e, false)         \
  MYNS_SKINNY_MT(dt, T, n, false, v, true)         \
  MYNS_SKINNY_MT(dt, T, n, false, e, false)
MYNS_SKINNY(f16, __half)
MYNS_SKINNY(bf16, __nv_bfloat16)

#define MYNS_SKINNY_TMA_ONE(dt, T, TF32, w, WK, MT, S)                                                                \
  extern "C" __global__ void __launch_bounds__(myns::skinny::TMA_THREADS, 1) mm_skinny_tma_##dt##_##w##_m##MT##_s##S( \
      const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmX, const SkinnyParams p) {       \
    myns::skinny::skinny_tma<T, WK, MT, S, TF32>(&tmW, &tmX, p);                                                    \
  }
// Element type and TF32 flag of each of src/gemm/tiles.rs SKINNY_TMA_DTYPES.
#define MYNS_SKT_f16 __half, false
#define MYNS_SKT_bf16 __nv_bfloat16, false
#define MYNS_SKT_f32 float, false
#define MYNS_SKT_tf32 float, true
#define MYNS_SKT_EXPAND(m, ...) m(__VA_ARGS__)
#define MYNS_SKINNY_TMA_BUILD(dt, MT, S)                            \
  MYNS_SKT_EXPAND(MYNS_SKINNY_TMA_ONE, dt, MYNS_SKT_##dt, k, true, MT, S) \
  MYNS_SKT_EXPAND(MYNS_SKINNY_TMA_ONE, dt, MYNS_SKT_##dt, n, false, MT, S)
// The builds src/gemm/tiles.rs `skinny_tma_built` lists: shared memory
// within an SM's, and float32's FFMA consumers at most 2 m blocks.
MYNS_SKINNY_TMA_BUILDS(MYNS_SKINNY_TMA_BUILD)

#define MYNS_SKINNY_F32_ONE(w, WK, v, VEC, MT)                                                       \
  extern "C" __global__ void __launch_bounds__(myns::skinny::THREADS, 1) mm_skinny_f32_##w##v##_m##MT( \
      const SkinnyParams p) {                                                                          \
    myns::skinny::skinny_f32<WK, VEC, MT>(p);                                                         \
  }
#define MYNS_SKINNY_F32(w, WK, v, VEC) MYNS_SKINNY_F32_ONE(w, WK, v, VEC, 1) MYNS_SKINNY_F32_ONE(w, WK, v, VEC, 2)
MYNS_SKINNY_F32(k, true, v, true)
MYNS_SKINNY_F32(k, true, e, false)
MYNS_SKINNY_F32(n, false, v, true)
MYNS_SKINNY_F32(n, false, e, false)
