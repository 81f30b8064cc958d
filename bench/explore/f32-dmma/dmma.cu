// Exploration (not in the library): float32 GEMM on the FP64 tensor cores.
// Each float32 is exact in float64 and so is each product of two; sums run
// in float64 and round once to float32 at the end: at least as accurate as
// an FFMA SGEMM. mma.sync m16n8k8 .f64 is sm_90's; its A, B and C fragments
// sit where the tf32 m16n8k8 ones do (kernels/matmul_tc.cu), in doubles.
// c[M][N] = a[M][K] b[K][N], all row-major; M, N, K multiples of the tile.
#include <stdint.h>

struct Args {
  const float* a;
  const float* b;
  float* c;
  int64_t M, N, K;
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void dmma(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__device__ __forceinline__ void gemm(const Args& p) {
  constexpr int THREADS = WM * WN * 32, WTM = BM / WM, WTN = BN / WN, MI = WTM / 16, NI = WTN / 8;
  constexpr int A_LD = BK + 4, B_LD = BN + 8;  // conflict-free scalar fragment loads
  constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * B_LD;
  extern __shared__ __align__(128) float smem[];
  float* As = smem;
  float* Bs = smem + STAGES * A_STAGE;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp / WN, wn = warp % WN;
  const int g = lane >> 2, t = lane & 3;
  const int64_t tiles_n = p.N / BN;
  const int64_t m0 = (blockIdx.x / tiles_n) * BM, n0 = (blockIdx.x % tiles_n) * BN;
  const int ktiles = static_cast<int>(p.K / BK);
  auto load = [&](int stage, int kt) {
    float* as = As + stage * A_STAGE;
    float* bs = Bs + stage * B_STAGE;
#pragma unroll
    for (int c = tid; c < BM * BK / 4; c += THREADS) {
      const int r = c / (BK / 4), q = c % (BK / 4);
      cp_async16(as + r * A_LD + q * 4, p.a + (m0 + r) * p.K + kt * BK + q * 4);
    }
#pragma unroll
    for (int c = tid; c < BK * BN / 4; c += THREADS) {
      const int r = c / (BN / 4), q = c % (BN / 4);
      cp_async16(bs + r * B_LD + q * 4, p.b + (int64_t)(kt * BK + r) * p.N + n0 + q * 4);
    }
  };
  double acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
    cp_async_commit();
    const float* as = As + (kt % STAGES) * A_STAGE;
    const float* bs = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
      const int kb = kk * 8 + t;
      double af[MI][4], bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int mb = wm * WTM + i * 16 + g;
        af[i][0] = as[mb * A_LD + kb];
        af[i][1] = as[(mb + 8) * A_LD + kb];
        af[i][2] = as[mb * A_LD + kb + 4];
        af[i][3] = as[(mb + 8) * A_LD + kb + 4];
      }
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int nb = wn * WTN + j * 8 + g;
        bf[j][0] = bs[kb * B_LD + nb];
        bf[j][1] = bs[(kb + 4) * B_LD + nb];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) dmma(acc[i][j], af[i], bf[j]);
    }
  }
  cp_async_wait<0>();
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int64_t r = m0 + wm * WTM + i * 16 + g, n = n0 + wn * WTN + j * 8 + 2 * t;
      *reinterpret_cast<float2*>(p.c + r * p.N + n) = make_float2((float)acc[i][j][0], (float)acc[i][j][1]);
      *reinterpret_cast<float2*>(p.c + (r + 8) * p.N + n) = make_float2((float)acc[i][j][2], (float)acc[i][j][3]);
    }
}

// name: dmma_<BM>x<BN>_k<BK>_w<WM>x<WN>_s<STAGES>
#define DMMA(BM, BN, BK, WM, WN, ST, MINB)                                                             \
  extern "C" __global__ void __launch_bounds__(WM * WN * 32, MINB) dmma_##BM##x##BN##_k##BK##_w##WM##x##WN##_s##ST(const Args p) { \
    gemm<BM, BN, BK, WM, WN, ST>(p);                                                                   \
  }
DMMA(128, 128, 16, 2, 4, 4, 1)
DMMA(128, 128, 32, 2, 4, 3, 1)
DMMA(128, 64, 16, 2, 2, 4, 2)
DMMA(64, 128, 16, 2, 2, 4, 2)
DMMA(128, 128, 16, 4, 2, 4, 1)
