// float32 matmul/bmm on the CUDA cores (full fp32 precision, used when
// PyTorch's allow_tf32 is off): register-blocked, each thread owns an
// (RM*4) x (RN*4) block of c made of 4x4 pieces spread over the tile so that
// shared-memory reads are broadcast float4s. Global tiles reach shared
// memory (kept M- and N-contiguous) through an ST-stage cp.async pipeline,
// as cuBLAS's SGEMM does: no register staging, and the copies of the next
// ST - 1 k-tiles fly while this one is multiplied. A K-contiguous operand is
// transposed on the way in by 4-byte copies; an MN-contiguous one comes in
// 16-byte copies. Fragments are double-buffered in registers across k-steps
// and across k-tiles (the next tile's first ones load during the last step).
//
//   mm_simt_f32_<cfg>_<la><lb>   la/lb as in matmul_tc.cu (k: K-contiguous; m/n: MN-contiguous)
#include "matmul_common.cuh"
#include "gemm_tiles.h"

namespace myns {

// Copies R x BK tiles of one operand (KC: K-contiguous, row stride `ld`;
// else MN-contiguous, k-line stride `ld`) into shared memory as [BK][R + 4],
// zero-filling what lies past the operand's rows or k_end. Each thread's
// copies sit a fixed stride apart, so it keeps one pointer and steps it (a
// 64-bit address per copy cost the 256-row tile its registers). The tiled
// kernels get 16-byte aligned operands (src/gemm stages others), so
// MN-contiguous lines come in 16-byte pieces.
template <int R, int BK, int THREADS, bool KC>
struct SimtCopy {
  static constexpr int LD = R + 4;
  // KC: the thread copies k = tid % BK of rows tid / BK + i * RS.
  // MN: 4 elements at r = (tid % CPR) * 4 of k-lines tid / CPR + i * KS.
  static constexpr int RS = THREADS / BK, CPR = R / 4, KS = THREADS / CPR;
  static constexpr int PER = KC ? R / RS : BK / KS;
  static_assert(KC ? (THREADS % BK == 0 && R % RS == 0) : (THREADS % CPR == 0 && BK % KS == 0), "simt copy shape");

  const float* src;  // this thread's first copy of the first k-tile
  int64_t ld;
  int dst;    // its first copy's offset in a stage
  int valid;  // KC: copies whose row exists; MN: elements of its chunk that exist (0..4)
  int kline;  // the k (KC) or first k-line (MN) it copies, within a tile

  __device__ __forceinline__ SimtCopy(const float* g, int64_t r0, int64_t rows, int64_t k_begin, int64_t ld_, int tid)
      : ld(ld_) {
    if constexpr (KC) {
      const int r = tid / BK;
      kline = tid % BK;
      src = g + (r0 + r) * ld + k_begin + kline;
      dst = kline * LD + r;
      const int64_t left = rows - r0 - r;  // rows from this thread's first
      valid = left <= 0 ? 0 : static_cast<int>(min((left + RS - 1) / RS, (int64_t)PER));
    } else {
      const int rq = tid % CPR;
      kline = tid / CPR;
      src = g + (k_begin + kline) * ld + r0 + rq * 4;
      dst = kline * LD + rq * 4;
      valid = static_cast<int>(max((int64_t)0, min(rows - r0 - rq * 4, (int64_t)4)));
    }
  }

  // K-tile kt into stage `s`; `k_left`: k-lines of the operand from this tile's first.
  __device__ __forceinline__ void copy(float* s, const float* g, int kt, int64_t k_left) const {
    if constexpr (KC) {
      const float* p = src + static_cast<int64_t>(kt) * BK;
      const bool kin = kline < k_left;
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        const bool in = kin && i < valid;
        cp_async4(s + dst + i * RS, in ? p + i * RS * ld : g, in ? 4 : 0);
      }
    } else {
      const float* p = src + static_cast<int64_t>(kt) * BK * ld;
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        const bool in = kline + i * KS < k_left && valid > 0;
        cp_async16(s + dst + i * KS * LD, in ? p + i * KS * ld : g, in ? valid * 4 : 0);
      }
    }
  }
};

template <int BM, int BN, int BK, int TY, int TX, int ST, bool AK, bool BK_>
__device__ __forceinline__ void simt_gemm(const GemmParams& p) {
  constexpr int THREADS = TY * TX;
  constexpr int RM = BM / (TY * 4), RN = BN / (TX * 4);
  static_assert(RM * TY * 4 == BM && RN * TX * 4 == BN && TY % 4 == 0 && TX % 8 == 0, "simt tile");
  static_assert(ST >= 2 && BK % 2 == 0, "simt stages; fragments alternate buffers per k-step, so a tile's last step leaves buffer 0 next");
  constexpr int LDA = BM + 4, LDB = BN + 4, A_BUF = BK * LDA, B_BUF = BK * LDB;
  extern __shared__ __align__(16) float smem_f[];
  float* As = smem_f;               // [ST][BK][BM + 4]
  float* Bs = smem_f + ST * A_BUF;  // [ST][BK][BN + 4]

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

    const SimtCopy<BM, BK, THREADS, AK> ca(a, m0, M, k_begin, lda, tid);
    const SimtCopy<BN, BK, THREADS, BK_> cb(b, n0, N, k_begin, ldb, tid);
    // Every step commits one group (empty past the last tile), so that
    // "all but the newest ST - 2 groups done" always means the tile wanted.
    auto copy_tile = [&](int kt) {
      if (kt < ktiles) {
        const int s = kt % ST;
        const int64_t k_left = k_end - k_begin - static_cast<int64_t>(kt) * BK;
        ca.copy(As + s * A_BUF, a, kt, k_left);
        cb.copy(Bs + s * B_BUF, b, kt, k_left);
      }
      cp_async_commit();
    };

    float acc[RM * 4][RN * 4];
#pragma unroll
    for (int i = 0; i < RM * 4; ++i)
#pragma unroll
      for (int j = 0; j < RN * 4; ++j) acc[i][j] = 0.f;

    float ra[2][RM * 4], rb[2][RN * 4];
    auto fragments = [&](float (&fa)[RM * 4], float (&fb)[RN * 4], const float* as, const float* bs, int k) {
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(as + k * LDA + i * TY * 4 + ty * 4);
        fa[i * 4 + 0] = v.x; fa[i * 4 + 1] = v.y; fa[i * 4 + 2] = v.z; fa[i * 4 + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(bs + k * LDB + j * TX * 4 + tx * 4);
        fb[j * 4 + 0] = v.x; fb[j * 4 + 1] = v.y; fb[j * 4 + 2] = v.z; fb[j * 4 + 3] = v.w;
      }
    };

#pragma unroll
    for (int s = 0; s < ST - 1; ++s) copy_tile(s);
    cp_async_wait<ST - 2>();
    __syncthreads();
    if (ktiles > 0) fragments(ra[0], rb[0], As, Bs, 0);

    for (int kt = 0; kt < ktiles; ++kt) {
      // Into the stage tile kt - 1 used: every thread is past its reads
      // (the barrier before the last step of the previous tile).
      copy_tile(kt + ST - 1);
      const float* as = As + (kt % ST) * A_BUF;
      const float* bs = Bs + (kt % ST) * B_BUF;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        const int cur = k & 1, nxt = cur ^ 1;  // constant once unrolled
        if (k + 1 < BK) {
          fragments(ra[nxt], rb[nxt], as, bs, k + 1);
        } else {
          // Tile kt + 1 has landed for every thread; its first fragments
          // load while the last step of this one multiplies.
          cp_async_wait<ST - 2>();
          __syncthreads();
          if (kt + 1 < ktiles) {
            const int s = (kt + 1) % ST;
            fragments(ra[nxt], rb[nxt], As + s * A_BUF, Bs + s * B_BUF, 0);
          }
        }
        // Column-major over the thread's block: ptxas then keeps each b in
        // its reuse cache while a varies, and a (float4 quads over rows)
        // meets the accumulators (quads over columns) in the same register
        // bank for a quarter of the multiply-adds; row-major, b and the
        // accumulators shared a bank in nearly all of them (nvdisasm of the
        // 256 x 128 tile: 94% against 19% with reg % 4 banks).
#pragma unroll
        for (int j = 0; j < RN * 4; ++j)
#pragma unroll
          for (int i = 0; i < RM * 4; ++i) acc[i][j] = fmaf(ra[cur][i], rb[cur][j], acc[i][j]);
      }
    }
    cp_async_wait<0>();

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

#define MYNS_SIMT_ONE(name, BM, BN, BK, TY, TX, ST, MINB, AK, BKC)                              \
  extern "C" __global__ void __launch_bounds__(TY * TX, MINB) name(const GemmParams p) {          \
    myns::simt_gemm<BM, BN, BK, TY, TX, ST, AK, BKC>(p);                                          \
  }
#define MYNS_SIMT(cfg, BM, BN, BK, TY, TX, ST, MINB)                                 \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_kk, BM, BN, BK, TY, TX, ST, MINB, true, true)    \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_kn, BM, BN, BK, TY, TX, ST, MINB, true, false)   \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_mk, BM, BN, BK, TY, TX, ST, MINB, false, true)   \
  MYNS_SIMT_ONE(mm_simt_f32_##cfg##_mn, BM, BN, BK, TY, TX, ST, MINB, false, false)

// The tiles: src/gemm/tiles.rs (SIMT), through the generated header (WM x WN threads).
MYNS_SIMT_TILES(MYNS_SIMT)
