// Tensor-core matmul/bmm for sm_80-class GPUs (runs on sm_90 too):
// mma.sync m16n8k16 (float16, bfloat16) or m16n8k8 (tf32 for float32),
// float32 accumulation, a multi-stage cp.async pipeline, ldmatrix fragment
// loads, zero-filled edges (any M, N, K) and optional split-K. `X64`
// (float32 with TF32 off, compute capability 9.0 only): m16n8k8 on the
// FP64 tensor cores, each float32 converted exactly, products exact, sums
// in float64, one rounding to float32 at the end.
//
// Each operand is either "K-contiguous" or "MN-contiguous" in memory, with
// 16-byte-aligned rows; the Rust side picks the variant:
//   mm_tc_<dtype>_<cfg>_<la><lb>   la: k (a[m][k], k contiguous) | m (a^T stored)
//                                 lb: k (b^T stored: b[k][n], k contiguous) | n (b[k][n], n contiguous)
// cfg names the block tile (src/gemm/tiles.rs, through the generated gemm_tiles.h).
// Shared memory keeps each tile in its global orientation, rows padded by
// 16 bytes (K-contiguous) or 8 elements (MN-contiguous) so that ldmatrix and
// the tf32 scalar fragment loads are bank-conflict free.
#include <type_traits>

#include "matmul_common.cuh"
#include "gemm_tiles.h"

namespace myns {

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool AK, bool BK_>
struct TcTile {
  static constexpr int THREADS = WM * WN * 32;
  static constexpr int VEC = 16 / sizeof(T);  // elements per 16-byte chunk
  static constexpr int WTM = BM / WM, WTN = BN / WN;
  static constexpr int MI = WTM / 16, NI = WTN / 8;
  static constexpr int A_LD = AK ? BK + VEC : BM + 8;
  static constexpr int A_ROWS = AK ? BM : BK;
  static constexpr int B_LD = BK_ ? BK + VEC : BN + 8;
  static constexpr int B_ROWS = BK_ ? BN : BK;
  static constexpr int A_STAGE = A_ROWS * A_LD, B_STAGE = B_ROWS * B_LD;
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile");
  static_assert(BK % 16 == 0, "k tile");
};

// Streams one operand's tiles (BM x BK of a, or BK x BN of b) into shared
// memory, one k-tile per `load`, in order. `KC`: the operand is K-contiguous
// in memory; the stored tile is [R][BK] (KC) or [BK][R], R = BM or BN.
// Thread `tid` copies chunks tid, tid + THREADS, ...: the same column of
// chunks every THREADS / CPR rows, so one pointer (advanced by a k-tile per
// call), a row step and a validity mask describe them all; only the last
// (partial) k-tile computes K bounds.
template <typename T, int R, int BK, int LD, int THREADS, bool KC>
struct TileLoader {
  static constexpr int VEC = 16 / sizeof(T);
  static constexpr int CPR = KC ? BK / VEC : R / VEC;  // chunks per stored row
  static constexpr int TOTAL = KC ? R * CPR : BK * CPR;
  static constexpr int PER = (TOTAL + THREADS - 1) / THREADS;
  static constexpr int ROWS_PER = THREADS / CPR;  // stored rows between a thread's chunks
  static_assert(THREADS % CPR == 0, "a thread's chunks must share a column");
  const T* base;
  const T* ptr;     // chunk 0 at the next k-tile
  int64_t row_step;  // elements from one of this thread's chunks to the next
  int64_t step;      // elements per k-tile
  int64_t k_next;
  uint32_t rows_ok;  // bit i: chunk i's row (m or n) is in range (KC) / chunk i exists
  int mn_bytes;      // MN-contiguous: in-range bytes of this thread's chunk column

  __device__ __forceinline__ void init(const T* g, int64_t r0, int64_t R_total, int64_t k_begin, int64_t ld, int tid) {
    base = g;
    k_next = k_begin;
    const int c0 = tid % CPR, row0 = tid / CPR;
    rows_ok = 0;
    if constexpr (KC) {
      ptr = g + (r0 + row0) * ld + k_begin + c0 * VEC;
      row_step = ROWS_PER * ld;
      step = BK;
      mn_bytes = 16;
#pragma unroll
      for (int i = 0; i < PER; ++i)
        if ((TOTAL % THREADS == 0 || tid + i * THREADS < TOTAL) && r0 + row0 + i * ROWS_PER < R_total) rows_ok |= 1u << i;
    } else {
      const int64_t gr = r0 + c0 * VEC;
      ptr = g + (k_begin + row0) * ld + gr;
      row_step = ROWS_PER * ld;
      step = BK * ld;
      mn_bytes = gr < R_total ? static_cast<int>(min(R_total - gr, (int64_t)VEC) * sizeof(T)) : 0;
#pragma unroll
      for (int i = 0; i < PER; ++i)
        if (TOTAL % THREADS == 0 || tid + i * THREADS < TOTAL) rows_ok |= 1u << i;
    }
  }

  __device__ __forceinline__ void load(T* s, int64_t k_end, int tid) {
    const bool full = k_next + BK <= k_end;
    const int c0 = tid % CPR, row0 = tid / CPR;
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      if (!(rows_ok >> i & 1)) continue;
      const int row = row0 + i * ROWS_PER;
      const T* src = ptr + i * row_step;
      int nb;
      if constexpr (KC) {
        nb = 16;
        if (!full) {
          const int64_t left = k_end - (k_next + c0 * VEC);
          nb = left <= 0 ? 0 : left >= VEC ? 16 : static_cast<int>(left) * static_cast<int>(sizeof(T));
        }
      } else {
        nb = full || k_next + row < k_end ? mn_bytes : 0;
      }
      cp_async16(s + row * LD + c0 * VEC, nb ? src : base, nb);
    }
    ptr += step;
    k_next += BK;
  }
};

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, bool AK, bool BK_, bool X64 = false>
__device__ __forceinline__ void tc_gemm(const GemmParams& p) {
  using Cfg = TcTile<T, BM, BN, BK, WM, WN, STAGES, AK, BK_>;
  constexpr int THREADS = Cfg::THREADS, MI = Cfg::MI, NI = Cfg::NI, WTM = Cfg::WTM, WTN = Cfg::WTN;
  constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD;
  static_assert(!X64 || sizeof(T) == 4, "X64 takes float32");
  constexpr int KS = X64 ? Dmma::K : Mma<T>::K;
  using Acc = std::conditional_t<X64, double, float>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* As = reinterpret_cast<T*>(smem_raw);
  T* Bs = As + STAGES * Cfg::A_STAGE;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WN, wn = warp % WN;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  int64_t tm, tn;
  tile_of(blockIdx.x, tiles_m, tiles_n, tm, tn);
  const int64_t m0 = tm * BM, n0 = tn * BN;
  // Paired (2-element) stores need an even row pitch and unit column stride.
  const bool paired_c = p.scn == 1 && (p.scm % 2 == 0) && (p.scb % 2 == 0);

  for (int64_t z = blockIdx.z; z < p.batch * p.splits; z += gridDim.z) {
    const int64_t bz = z / p.splits, split = z - bz * p.splits;
    const T* a = static_cast<const T*>(p.a) + bz * p.sab;
    const T* b = static_cast<const T*>(p.b) + bz * p.sbb;
    const int64_t k_begin = split * p.k_chunk;
    const int64_t k_end = min(K, k_begin + p.k_chunk);
    const int ktiles = k_end > k_begin ? static_cast<int>((k_end - k_begin + BK - 1) / BK) : 0;
    const int64_t lda = AK ? p.sam : p.sak, ldb = BK_ ? p.sbn : p.sbk;

    TileLoader<T, BM, BK, A_LD, THREADS, AK> la;
    TileLoader<T, BN, BK, B_LD, THREADS, BK_> lb;
    la.init(a, m0, M, k_begin, lda, tid);
    lb.init(b, n0, N, k_begin, ldb, tid);
    // Tiles are loaded strictly in order (kt = 0, 1, 2, ...), into `stage`.
    auto load = [&](int stage, int kt) {
      (void)kt;
      la.load(As + stage * Cfg::A_STAGE, k_end, tid);
      lb.load(Bs + stage * Cfg::B_STAGE, k_end, tid);
    };

    Acc acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) load(s, s);
      cp_async_commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      // Refill the stage everyone finished reading in the previous iteration.
      if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
      cp_async_commit();

      const T* as = As + (kt % STAGES) * Cfg::A_STAGE;
      const T* bs = Bs + (kt % STAGES) * Cfg::B_STAGE;
#pragma unroll
      for (int kk = 0; kk < BK / KS; ++kk) {
        // X64: the tf32 fragments' places, as exact doubles.
        using Frag = std::conditional_t<X64, double, uint32_t>;
        Frag af[MI][4], bf[NI][2];
        if constexpr (sizeof(T) == 2) {
#pragma unroll
          for (int i = 0; i < MI; ++i) {
            const int mb = wm * WTM + i * 16;
            if constexpr (AK) {
              ldsm_x4(af[i], as + (mb + (lane & 15)) * A_LD + kk * 16 + (lane >> 4) * 8);
            } else {
              ldsm_x4_t(af[i], as + (kk * 16 + (lane & 7) + (lane >> 4) * 8) * A_LD + mb + ((lane >> 3) & 1) * 8);
            }
          }
#pragma unroll
          for (int j = 0; j < NI / 2; ++j) {
            const int nb = wn * WTN + j * 16;
            uint32_t r[4];
            if constexpr (BK_) {
              ldsm_x4(r, bs + (nb + (lane & 7) + (lane >> 4) * 8) * B_LD + kk * 16 + ((lane >> 3) & 1) * 8);
            } else {
              ldsm_x4_t(r, bs + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * B_LD + nb + (lane >> 4) * 8);
            }
            bf[2 * j][0] = r[0];
            bf[2 * j][1] = r[1];
            bf[2 * j + 1][0] = r[2];
            bf[2 * j + 1][1] = r[3];
          }
        } else {
          // tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (k t, n g), b1 (k t+4, n g).
          const int g = lane >> 2, t = lane & 3, kb = kk * 8 + t;
          auto cvt = [](float x) -> Frag {
            if constexpr (X64) {
              return x;
            } else {
              return to_tf32(x);
            }
          };
          auto A = [&](int m, int k) { return cvt(AK ? as[m * A_LD + k] : as[k * A_LD + m]); };
          auto B = [&](int k, int n) { return cvt(BK_ ? bs[n * B_LD + k] : bs[k * B_LD + n]); };
#pragma unroll
          for (int i = 0; i < MI; ++i) {
            const int mb = wm * WTM + i * 16 + g;
            af[i][0] = A(mb, kb);
            af[i][1] = A(mb + 8, kb);
            af[i][2] = A(mb, kb + 4);
            af[i][3] = A(mb + 8, kb + 4);
          }
#pragma unroll
          for (int j = 0; j < NI; ++j) {
            const int nb = wn * WTN + j * 8 + g;
            bf[j][0] = B(kb, nb);
            bf[j][1] = B(kb + 4, nb);
          }
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) {
            if constexpr (X64) {
              Dmma::run(acc[i][j], af[i], bf[j]);
            } else {
              Mma<T>::run(acc[i][j], af[i], bf[j]);
            }
          }
      }
    }
    cp_async_wait<0>();

    // Epilogue: straight from the accumulator fragments (row g / g+8, cols 2t, 2t+1).
    const int g = lane >> 2, t = lane & 3;
    if (p.splits == 1) {
      T* c = static_cast<T*>(p.c) + bz * p.scb;
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const int64_t r = m0 + wm * WTM + i * 16 + g, n = n0 + wn * WTN + j * 8 + 2 * t;
          store2<T>(c, r, n, acc[i][j][0], acc[i][j][1], M, N, p.scm, p.scn, paired_c, p.beta != 0);
          store2<T>(c, r + 8, n, acc[i][j][2], acc[i][j][3], M, N, p.scm, p.scn, paired_c, p.beta != 0);
        }
    } else {
      float* w = p.ws + z * M * N;
      const bool paired_w = (N % 2 == 0);
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const int64_t r = m0 + wm * WTM + i * 16 + g, n = n0 + wn * WTN + j * 8 + 2 * t;
          store2<float>(w, r, n, acc[i][j][0], acc[i][j][1], M, N, N, 1, paired_w);
          store2<float>(w, r + 8, n, acc[i][j][2], acc[i][j][3], M, N, N, 1, paired_w);
        }
    }
    __syncthreads();  // the next batch's prologue overwrites shared memory
  }
}

// Sums the split-K partials ([batch][splits][M][N] float32, or [N][M]) into
// c, walking them in their stored order.
template <typename T>
__device__ __forceinline__ void splitk_reduce(const GemmParams& p) {
  const int64_t mn = p.M * p.N, total = p.batch * mn;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t bz = i / mn, e = i - bz * mn;
    const int64_t r = e / p.N, n = e % p.N;
    const float* w = p.ws + bz * p.splits * mn + e;
    float s = 0.f;
    for (int64_t k = 0; k < p.splits; ++k) s += w[k * mn];
    T* c = static_cast<T*>(p.c) + bz * p.scb + r * p.scm + n * p.scn;
    if (p.beta) s += to_acc(*c);
    *c = from_acc<T>(s);
  }
}

}  // namespace myns

using myns::GemmParams;

// name, T, BM, BN, BK, WM, WN, STAGES, min blocks per SM
#define MYNS_TC_ONE(name, T, BM, BN, BK, WM, WN, ST, MINB, AK, BKC, X64)                            \
  extern "C" __global__ void __launch_bounds__(WM * WN * 32, MINB) name(const GemmParams p) {        \
    myns::tc_gemm<T, BM, BN, BK, WM, WN, ST, AK, BKC, X64>(p);                                        \
  }
#define MYNS_TC_X(dt, cfg, T, BM, BN, BK, WM, WN, ST, MINB, X64)                                      \
  MYNS_TC_ONE(mm_tc_##dt##_##cfg##_kk, T, BM, BN, BK, WM, WN, ST, MINB, true, true, X64)              \
  MYNS_TC_ONE(mm_tc_##dt##_##cfg##_kn, T, BM, BN, BK, WM, WN, ST, MINB, true, false, X64)             \
  MYNS_TC_ONE(mm_tc_##dt##_##cfg##_mk, T, BM, BN, BK, WM, WN, ST, MINB, false, true, X64)             \
  MYNS_TC_ONE(mm_tc_##dt##_##cfg##_mn, T, BM, BN, BK, WM, WN, ST, MINB, false, false, X64)
#define MYNS_TC(dt, cfg, T, BM, BN, BK, WM, WN, ST, MINB) MYNS_TC_X(dt, cfg, T, BM, BN, BK, WM, WN, ST, MINB, false)

// The tiles: src/gemm/tiles.rs (TC_HALF, TC_TF32), through the generated header.
#define MYNS_TC_F16(cfg, BM, BN, BK, WM, WN, ST, MINB) MYNS_TC(f16, cfg, __half, BM, BN, BK, WM, WN, ST, MINB)
#define MYNS_TC_BF16(cfg, BM, BN, BK, WM, WN, ST, MINB) MYNS_TC(bf16, cfg, __nv_bfloat16, BM, BN, BK, WM, WN, ST, MINB)
#define MYNS_TC_TF32(cfg, BM, BN, BK, WM, WN, ST, MINB) MYNS_TC(tf32, cfg, float, BM, BN, BK, WM, WN, ST, MINB)
MYNS_TC_HALF_TILES(MYNS_TC_F16)
MYNS_TC_HALF_TILES(MYNS_TC_BF16)
MYNS_TC_TF32_TILES(MYNS_TC_TF32)
#define MYNS_TC_F32X(cfg, BM, BN, BK, WM, WN, ST, MINB) MYNS_TC_X(f32x, cfg, float, BM, BN, BK, WM, WN, ST, MINB, true)
MYNS_TC_X64_TILES(MYNS_TC_F32X)

#define MYNS_SPLITK_REDUCE(suffix, T) \
  extern "C" __global__ void mm_splitk_reduce_##suffix(const GemmParams p) { myns::splitk_reduce<T>(p); }
MYNS_FOR_EACH_FLOAT(MYNS_SPLITK_REDUCE)
