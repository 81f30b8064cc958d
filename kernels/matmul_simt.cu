// float32 matmul/bmm on the CUDA cores (full fp32 precision, used when
// PyTorch's allow_tf32 is off): register-blocked, each thread owns an
// (RM*4) x (RN*4) block of c made of 4x4 pieces spread over the tile so that
// shared-memory reads are broadcast float4s; global tiles are staged through
// registers (float4 loads, zero-filled edges) into a double-buffered shared
// memory kept M- and N-contiguous.
//
//   mm_simt_f32_<cfg>_<la><lb>   la/lb as in matmul_tc.cu (k: K-contiguous; m/n: MN-contiguous)
#include "matmul_common.cuh"
#include "gemm_tiles.h"

namespace myns {

// Reads 4 consecutive elements (along the contiguous dimension) starting at
// `p`; `valid` of them are in range (the rest read as 0).
__device__ __forceinline__ float4 load4(const float* p, int valid) {
  if (valid >= 4) return __ldg(reinterpret_cast<const float4*>(p));
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (valid > 0) v.x = __ldg(p);
  if (valid > 1) v.y = __ldg(p + 1);
  if (valid > 2) v.z = __ldg(p + 2);
  return v;
}

// One operand tile: R rows of the output dimension (m or n) by BK, stored in
// shared memory as [BK][R + 4]. KC: the operand is K-contiguous in memory.
template <int R, int BK, int THREADS, bool KC>
struct SimtLoader {
  static constexpr int CHUNKS = R * BK / 4;
  static constexpr int PER_THREAD = (CHUNKS + THREADS - 1) / THREADS;
  static constexpr int LD = R + 4;
  float4 v[PER_THREAD];

  __device__ __forceinline__ void load(const float* g, int64_t r0, int64_t R_total, int64_t k0, int64_t k_end,
                                       int64_t ld, int tid) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int c = tid + i * THREADS;
      v[i] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (CHUNKS % THREADS != 0 && c >= CHUNKS) continue;
      if constexpr (KC) {
        const int r = c / (BK / 4), kq = c % (BK / 4);
        const int64_t gr = r0 + r, gk = k0 + kq * 4;
        if (gr < R_total && gk < k_end) v[i] = load4(g + gr * ld + gk, static_cast<int>(min(k_end - gk, (int64_t)4)));
      } else {
        const int k = c / (R / 4), rq = c % (R / 4);
        const int64_t gk = k0 + k, gr = r0 + rq * 4;
        if (gk < k_end && gr < R_total) v[i] = load4(g + gk * ld + gr, static_cast<int>(min(R_total - gr, (int64_t)4)));
      }
    }
  }

  __device__ __forceinline__ void store(float* s, int tid) const {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int c = tid + i * THREADS;
      if (CHUNKS % THREADS != 0 && c >= CHUNKS) continue;
      if constexpr (KC) {
        const int r = c / (BK / 4), kq = c % (BK / 4);
        s[(kq * 4 + 0) * LD + r] = v[i].x;
        s[(kq * 4 + 1) * LD + r] = v[i].y;
        s[(kq * 4 + 2) * LD + r] = v[i].z;
        s[(kq * 4 + 3) * LD + r] = v[i].w;
      } else {
        const int k = c / (R / 4), rq = c % (R / 4);
        *reinterpret_cast<float4*>(s + k * LD + rq * 4) = v[i];
      }
    }
  }
};

template <int BM, int BN, int BK, int TY, int TX, bool AK, bool BK_>
__device__ __forceinline__ void simt_gemm(const GemmParams& p) {
  constexpr int THREADS = TY * TX;
  constexpr int RM = BM / (TY * 4), RN = BN / (TX * 4);
  static_assert(RM * TY * 4 == BM && RN * TX * 4 == BN && TY % 4 == 0 && TX % 8 == 0, "simt tile");
  using LA = SimtLoader<BM, BK, THREADS, AK>;
  using LB = SimtLoader<BN, BK, THREADS, BK_>;
  constexpr int A_BUF = BK * LA::LD, B_BUF = BK * LB::LD;
  extern __shared__ __align__(16) float smem_f[];
  float* As = smem_f;             // [2][BK][BM + 4]
  float* Bs = smem_f + 2 * A_BUF;  // [2][BK][BN + 4]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  // A warp covers 4 thread rows by 8 thread columns: float4 reads of A are
  // 4-way broadcasts, of B 8 consecutive float4s.
  const int ty = (warp / (TX / 8)) * 4 + lane / 8, tx = (warp % (TX / 8)) * 8 + lane % 8;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  int64_t tm, tn;
  tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
  const int64_t m0 = tm * BM, n0 = tn * BN;

  for (int64_t z = blockIdx.z; z < p.batch * p.splits; z += gridDim.z) {
    const int64_t bz = z / p.splits, split = z - bz * p.splits;
    const float* a = static_cast<const float*>(p.a) + bz * p.sab;
    const float* b = static_cast<const float*>(p.b) + bz * p.sbb;
    const int64_t k_begin = split * p.k_chunk;
    const int64_t k_end = min(K, k_begin + p.k_chunk);
    const int ktiles = k_end > k_begin ? static_cast<int>((k_end - k_begin + BK - 1) / BK) : 0;
    const int64_t lda = AK ? p.sam : p.sak, ldb = BK_ ? p.sbn : p.sbk;

    float acc[RM * 4][RN * 4];
#pragma unroll
    for (int i = 0; i < RM * 4; ++i)
#pragma unroll
      for (int j = 0; j < RN * 4; ++j) acc[i][j] = 0.f;

    LA la;
    LB lb;
    if (ktiles > 0) {
      la.load(a, m0, M, k_begin, k_end, lda, tid);
      lb.load(b, n0, N, k_begin, k_end, ldb, tid);
      la.store(As, tid);
      lb.store(Bs, tid);
    }
    __syncthreads();

    for (int kt = 0; kt < ktiles; ++kt) {
      const bool more = kt + 1 < ktiles;
      if (more) {
        const int64_t k0 = k_begin + static_cast<int64_t>(kt + 1) * BK;
        la.load(a, m0, M, k0, k_end, lda, tid);
        lb.load(b, n0, N, k0, k_end, ldb, tid);
      }
      const float* as = As + (kt & 1) * A_BUF;
      const float* bs = Bs + (kt & 1) * B_BUF;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float ra[RM * 4], rb[RN * 4];
#pragma unroll
        for (int i = 0; i < RM; ++i) {
          const float4 v = *reinterpret_cast<const float4*>(as + k * LA::LD + i * TY * 4 + ty * 4);
          ra[i * 4 + 0] = v.x; ra[i * 4 + 1] = v.y; ra[i * 4 + 2] = v.z; ra[i * 4 + 3] = v.w;
        }
#pragma unroll
        for (int j = 0; j < RN; ++j) {
          const float4 v = *reinterpret_cast<const float4*>(bs + k * LB::LD + j * TX * 4 + tx * 4);
          rb[j * 4 + 0] = v.x; rb[j * 4 + 1] = v.y; rb[j * 4 + 2] = v.z; rb[j * 4 + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < RM * 4; ++i)
#pragma unroll
          for (int j = 0; j < RN * 4; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
      }
      if (more) {
        la.store(As + ((kt + 1) & 1) * A_BUF, tid);
        lb.store(Bs + ((kt + 1) & 1) * B_BUF, tid);
      }
      __syncthreads();
    }

    // Epilogue: 4 consecutive columns per piece; float4 stores when aligned.
    float* c;
    int64_t scm, scn;
    if (p.splits == 1) {
      c = static_cast<float*>(p.c) + bz * p.scb;
      scm = p.scm;
      scn = p.scn;
    } else {
      c = p.ws + z * M * N;
      scm = N;
      scn = 1;
    }
    const bool vec = scn == 1 && scm % 4 == 0 && (p.splits > 1 || p.scb % 4 == 0) &&
                     (reinterpret_cast<uintptr_t>(c) % 16 == 0);
    const bool add = p.beta != 0 && p.splits == 1;  // c += a @ b (split K: the reduction adds)
#pragma unroll
    for (int i = 0; i < RM * 4; ++i) {
      const int64_t r = m0 + (i / 4) * TY * 4 + ty * 4 + (i % 4);
      if (r >= M) continue;
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const int64_t n = n0 + j * TX * 4 + tx * 4;
        float* q = c + r * scm + n * scn;
        if (vec && n + 3 < N) {
          float4 v = make_float4(acc[i][j * 4], acc[i][j * 4 + 1], acc[i][j * 4 + 2], acc[i][j * 4 + 3]);
          if (add) {
            const float4 o = *reinterpret_cast<const float4*>(q);
            v.x += o.x, v.y += o.y, v.z += o.z, v.w += o.w;
          }
          *reinterpret_cast<float4*>(q) = v;
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (n + e < N) q[e * scn] = add ? acc[i][j * 4 + e] + q[e * scn] : acc[i][j * 4 + e];
        }
      }
    }
    __syncthreads();
  }
}

}  // namespace myns

using myns::GemmParams;

#define MYNS_SIMT_ONE(name, BM, BN, BK, TY, TX, MINB, AK, BKC)                                  \
  extern "C" __global__ void __launch_bounds__(TY * TX, MINB) name(const GemmParams p) {          \
    myns::simt_gemm<BM, BN, BK, TY, TX, AK, BKC>(p);                                              \
  }
#define MYNS_SIMT(cfg, BM, BN, BK, TY, TX, MINB)                                 \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_kk, BM, BN, BK, TY, TX, MINB, true, true)    \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_kn, BM, BN, BK, TY, TX, MINB, true, false)   \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_mk, BM, BN, BK, TY, TX, MINB, false, true)   \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_mn, BM, BN, BK, TY, TX, MINB, false, false)

// The tiles: src/gemm/tiles.rs (SIMT), through the generated header (WM x WN threads).
#define MYNS_SIMT_TILE(cfg, BM, BN, BK, TY, TX, ST, MINB) MYNS_SIMT(cfg, BM, BN, BK, TY, TX, MINB)
MYNS_SIMT_TILES(MYNS_SIMT_TILE)
