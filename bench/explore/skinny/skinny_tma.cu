// Harness-only prototype (bf16): the skinny kernel with the weights and x
// streamed by TMA into a ring of shared-memory stages (cuBLAS's decode
// kernels, nvjet 64x8 / 128x16, run so: ncu-*.txt in results/), instead of
// 16-byte loads into registers in bursts. One producer warp (one thread
// issues the copies), CW consumer warps taking the stages in turn; each
// stage holds 64 k by 64 n of weights (128-byte swizzle) and 64 k of x's
// 8 MT rows. Edges: TMA fills what lies past K, N or M with zeros.
// Configuration: -DCFG_CW (consumer warps) -DCFG_STAGES.
#include <cuda.h>

#include "matmul_common.cuh"

#ifndef CFG_CW
#define CFG_CW 4
#endif
#ifndef CFG_STAGES
#define CFG_STAGES 12
#endif
// Debug switches (run 6): CFG_XTMA 0 loads x from global memory (no x
// box); CFG_FENCE 0 leaves out the proxy fence before a stage is released
// and CFG_CLOB 0 the shared-memory loads' memory clobber: without both, some
// sums came out wrong on the H100 (the stage's next TMA write overtook this
// warp's generic-proxy reads of it).
#ifndef CFG_XTMA
#define CFG_XTMA 1
#endif
#ifndef CFG_FENCE
#define CFG_FENCE 1
#endif
#ifndef CFG_CLOB
#define CFG_CLOB 1
#endif
#if CFG_CLOB
#define LDS_CLOB : "memory"
#else
#define LDS_CLOB
#endif

namespace tma {
using namespace myns;

struct SkinnyParams {
  const void* x;
  const void* w;
  void* c;
  int64_t M, N, K;
  int64_t sxm, sxb;
  int64_t sw, swb;
  int64_t scm, scn, scb;
  int64_t batch;
  int64_t k_chunk;  // a multiple of 64
  int64_t beta;
};
constexpr int NW = 64, BK = 64, CW = CFG_CW, STAGES = CFG_STAGES, THREADS = (CW + 1) * 32;
constexpr int W_BYTES = BK * NW * 2;
// Warp w consumes the stages i = w mod CW, so each stage always has the same
// consumer and no warp waits on a phase two ahead of its barrier's (run 6:
// 8 warps on 12 stages read stages before they were loaded, then faulted).
static_assert(STAGES % CW == 0, "stages are dealt to the consumer warps in turn");

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// CFG_EVICT 1: the weights' TMA loads carry an L2 evict_first policy (their
// lines are read once; dirty lines left in L2 by earlier kernels then stay
// instead of being written back while this kernel streams).
#ifndef CFG_EVICT
#define CFG_EVICT 0
#endif
__device__ __forceinline__ void tma_load_w(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
#if CFG_EVICT
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "l"(pol)
      : "memory");
#else
  tma_load(dst, map, bar, c0, c1, c2);
#endif
}
__device__ __forceinline__ uint4 lds4(uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) LDS_CLOB);
  return v;
}
__device__ __forceinline__ uint2 lds2(uint32_t a) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(a) LDS_CLOB);
  return v;
}
__device__ __forceinline__ float ld_cluster(const float* p, uint32_t rank) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  uint32_t ra;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(a), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(ra) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
// Byte offset of 16-byte chunk `c` of row `r` in a 128-byte-swizzled tile.
__device__ __forceinline__ uint32_t swz(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

extern __shared__ __align__(1024) unsigned char tma_smem[];

// `n` 16-bit elements of x row m from k (zeros past M, ke, or n), as 4 words.
__device__ __forceinline__ uint4 x_global(const SkinnyParams& p, int64_t z, int64_t m, int64_t k, int64_t ke, int n) {
  uint16_t e[8];
  const unsigned short* r = static_cast<const unsigned short*>(p.x) + z * p.sxb + m * p.sxm;
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = (i < n && m < p.M && k + i < ke) ? __ldg(r + k + i) : 0;
  return make_uint4(e[0] | (uint32_t)e[1] << 16, e[2] | (uint32_t)e[3] << 16, e[4] | (uint32_t)e[5] << 16, e[6] | (uint32_t)e[7] << 16);
}

template <typename T, bool W_K, int MT>
__device__ __forceinline__ void skinny_tma(const CUtensorMap* tmW, const CUtensorMap* tmX, const SkinnyParams& p) {
  constexpr int X_BYTES = CFG_XTMA ? MT * 8 * 128 : 0, STAGE = W_BYTES + X_BYTES;
  const uint32_t raw = smem_addr(tma_smem), base = (raw + 1023u) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  float* red = reinterpret_cast<float*>(tma_smem + (bars - raw) + 16 * STAGES);  // [CW][MT * 8][NW]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int n0 = blockIdx.x * NW;
  const uint32_t rank = cluster_rank(), ranks = cluster_size();
  const int64_t kb = rank * p.k_chunk, ke = min(K, kb + p.k_chunk);
  const int nst = ke > kb ? static_cast<int>((ke - kb + BK - 1) / BK) : 0;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  int base_it = 0;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z, base_it += nst) {
    if (warp == CW) {
      if (lane == 0) {
        for (int i = 0; i < nst; ++i) {
          const int it = base_it + i, s = it % STAGES, round = it / STAGES;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
          const uint32_t st = base + s * STAGE;
          mbar_expect_tx(full(s), STAGE);
          const int k = static_cast<int>(kb) + i * BK;
          if constexpr (W_K) tma_load_w(st, tmW, full(s), k, n0, static_cast<int>(z));
          else tma_load_w(st, tmW, full(s), n0, k, static_cast<int>(z));
          if (CFG_XTMA) tma_load(st + W_BYTES, tmX, full(s), k, 0, static_cast<int>(z));
        }
      }
      // Reconverge before the block-wide barriers below: bar.sync counts a
      // whole warp per arrival, so lanes 1-31 arriving before lane 0 would
      // count the warp twice (seen on the H100: wrong sums, no fault).
      __syncwarp();
    } else {
      float acc[4][MT][4];
#pragma unroll
      for (int f = 0; f < 4; ++f)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[f][mt][e] = 0.f;
      for (int i = warp; i < nst; i += CW) {
        const int it = base_it + i, s = it % STAGES, round = it / STAGES;
        mbar_wait(full(s), round & 1);
        const uint32_t st = base + s * STAGE, xs = st + W_BYTES;
        if constexpr (W_K) {
          // Two k-steps of 32: load (f, h) is n-row 16 f + 8 h + g, k 32 ks + 8 t .. + 7 (chunk 4 ks + t).
#pragma unroll
          for (int ks = 0; ks < 2; ++ks) {
            uint4 wv[8], xv[MT];
#pragma unroll
            for (int l = 0; l < 8; ++l) wv[l] = lds4(st + swz(16 * (l / 2) + 8 * (l % 2) + g, 4 * ks + t));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              xv[mt] = CFG_XTMA ? lds4(xs + swz(8 * mt + g, 4 * ks + t)) : x_global(p, z, 8 * mt + g, kb + i * BK + 32 * ks + 8 * t, ke, 8);
#pragma unroll
            for (int f = 0; f < 4; ++f)
#pragma unroll
              for (int q = 0; q < 2; ++q) {
                const uint32_t a[4] = {word(wv[2 * f], 2 * q), word(wv[2 * f + 1], 2 * q), word(wv[2 * f], 2 * q + 1),
                                       word(wv[2 * f + 1], 2 * q + 1)};
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                  const uint32_t b[2] = {word(xv[mt], 2 * q), word(xv[mt], 2 * q + 1)};
                  Mma<T>::run(acc[f][mt], a, b);
                }
              }
          }
        } else {
          // Four k-steps of 16: load j is k-row 16 ks + 4 t + j, columns 8 g .. + 7 (chunk g).
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
            uint4 wv[4];
            uint2 xv[MT];
#pragma unroll
            for (int j = 0; j < 4; ++j) wv[j] = lds4(st + swz(16 * ks + 4 * t + j, g));
            // x: row 8 mt + g, k 16 ks + 4 t .. + 3: bytes 32 ks + 8 t, chunk 2 ks + t / 2.
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              if (CFG_XTMA) {
                xv[mt] = lds2(xs + swz(8 * mt + g, 2 * ks + t / 2) + (t & 1) * 8);
              } else {
                const uint4 v = x_global(p, z, 8 * mt + g, kb + i * BK + 16 * ks + 4 * t, ke, 4);
                xv[mt] = make_uint2(v.x, v.y);
              }
            }
#pragma unroll
            for (int f = 0; f < 4; ++f) {
              const uint32_t a[4] = {__byte_perm(word(wv[0], f), word(wv[1], f), 0x5410), __byte_perm(word(wv[0], f), word(wv[1], f), 0x7632),
                                     __byte_perm(word(wv[2], f), word(wv[3], f), 0x5410), __byte_perm(word(wv[2], f), word(wv[3], f), 0x7632)};
#pragma unroll
              for (int mt = 0; mt < MT; ++mt) {
                const uint32_t b[2] = {xv[mt].x, xv[mt].y};
                Mma<T>::run(acc[f][mt], a, b);
              }
            }
          }
        }
        if (CFG_FENCE) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane == 0) mbar_arrive(empty(s));
      }
      float* mine = red + warp * (MT * 8 * NW);
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
    // Sum the consumer warps, then the cluster's blocks; store.
    __syncthreads();
    constexpr int OUTS = MT * 8 * NW;
    for (int o = tid; o < OUTS; o += THREADS) {
      float s = 0.f;
#pragma unroll
      for (int v = 0; v < CW; ++v) s += red[v * OUTS + o];
      red[o] = s;
    }
    T* c = static_cast<T*>(p.c) + z * p.scb;
    if (ranks == 1) {
      __syncthreads();
      for (int o = tid; o < OUTS; o += THREADS) {
        const int64_t m = o / NW, n = n0 + o % NW;
        if (m < M && n < N) {
          T* q = c + m * p.scm + n * p.scn;
          *q = from_acc<T>(p.beta ? red[o] + to_acc(*q) : red[o]);
        }
      }
      __syncthreads();
    } else {
      cluster_sync();
      const int per = OUTS / static_cast<int>(ranks);
      for (int o = static_cast<int>(rank) * per + tid; o < static_cast<int>(rank + 1) * per; o += THREADS) {
        float s = 0.f;
        for (uint32_t q = 0; q < ranks; ++q) s += ld_cluster(red + o, q);
        const int64_t m = o / NW, n = n0 + o % NW;
        if (m < M && n < N) {
          T* q = c + m * p.scm + n * p.scn;
          *q = from_acc<T>(p.beta ? s + to_acc(*q) : s);
        }
      }
      cluster_sync();
    }
  }
}

template <bool W_K, int MT>
constexpr int smem_bytes() {
  return 1024 + STAGES * (W_BYTES + (CFG_XTMA ? MT * 8 * 128 : 0)) + 16 * STAGES + CW * MT * 8 * NW * 4;
}
}  // namespace tma

#define ONE(WK, MT)                                                                                                  \
  __global__ void __launch_bounds__(tma::THREADS, 1)                                                                 \
      t_##WK##_##MT(const __grid_constant__ CUtensorMap tmW, const __grid_constant__ CUtensorMap tmX, const tma::SkinnyParams p) { \
    tma::skinny_tma<__nv_bfloat16, WK, MT>(&tmW, &tmX, p);                                                           \
  }
ONE(true, 1) ONE(true, 2) ONE(false, 1) ONE(false, 2)

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;

// 3-d bf16 tensor map, 128-byte swizzle, dims/strides in elements (inner first).
static int make_map(CUtensorMap* m, const void* ptr, uint64_t d0, uint64_t d1, uint64_t d2, uint64_t s1, uint64_t s2, uint32_t b0, uint32_t b1) {
  if (!encode) {
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), cudaEnableDefault, &q) != cudaSuccess) return -2;
  }
  cuuint64_t dims[3] = {d0, d1, d2};
  cuuint64_t strides[2] = {s1 * 2, s2 * 2};
  cuuint32_t box[3] = {b0, b1, 1};
  cuuint32_t es[3] = {1, 1, 1};
  CUresult r = encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(ptr), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + (int)r;
}

// Same arguments as skinny_launch (launch.cuh); vec must be 1 (TMA needs 16-byte aligned rows).
extern "C" int skinny_launch(int wk, int vec, int mt, const void* params, int gx, int ranks, int gz, int threads, int smem, void* stream) {
  (void)smem;
  (void)threads;
  if (!vec) return -1;
  const tma::SkinnyParams& p = *static_cast<const tma::SkinnyParams*>(params);
  if (p.k_chunk % 64) return -3;
  CUtensorMap tmW, tmX;
  const uint64_t bt = p.batch, swb = p.batch > 1 ? p.swb : (wk ? p.N * p.sw : p.K * p.sw), sxb = p.batch > 1 ? p.sxb : p.M * p.sxm;
  int r = wk ? make_map(&tmW, p.w, p.K, p.N, bt, p.sw, swb, 64, 64) : make_map(&tmW, p.w, p.N, p.K, bt, p.sw, swb, 64, 64);
  if (r) return r;
  r = make_map(&tmX, p.x, p.K, p.M, bt, p.sxm, sxb, 64, 8 * mt);
  if (r) return r;
  const void* f = wk ? (mt == 1 ? (const void*)t_true_1 : (const void*)t_true_2) : (mt == 1 ? (const void*)t_false_1 : (const void*)t_false_2);
  const int sm = wk ? (mt == 1 ? tma::smem_bytes<true, 1>() : tma::smem_bytes<true, 2>()) : (mt == 1 ? tma::smem_bytes<false, 1>() : tma::smem_bytes<false, 2>());
  static const void* done[8];
  static int ndone = 0;
  bool seen = false;
  for (int i = 0; i < ndone; ++i) seen |= done[i] == f;
  if (!seen) {
    cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, sm);
    if (e != cudaSuccess) return 1000 + (int)e;
    cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (ndone < 8) done[ndone++] = f;
  }
  tma::SkinnyParams q = p;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(gx, ranks, gz);
  cfg.blockDim = dim3(tma::THREADS, 1, 1);
  cfg.dynamicSmemBytes = sm;
  cfg.stream = (cudaStream_t)stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = ranks;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = ranks > 1 ? 1 : 0;
  void* args[3] = {&tmW, &tmX, &q};
  return (int)cudaLaunchKernelExC(&cfg, f, args);
}
