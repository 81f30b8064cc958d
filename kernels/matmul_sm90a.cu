// myns-arch: sm_90a
// Hopper matmul/bmm for float16, bfloat16 and float32 as TF32: TMA
// bulk-tensor loads into a shared-memory ring (128-byte swizzle, mbarrier
// completion), wgmma m64nN tensor-core instructions reading both operands
// from shared memory, float32 accumulation in registers, output in
// the input dtype.
//
// Built for sm_90a alone (the marker on the first line; see build.rs) and
// loaded only on compute capability 9.0.
//
// Block tile 128 x BN x (128 bytes of K), BN 256, 128 or 64; three warpgroups: warpgroup 0 is
// the producer (one thread issues the TMA copies), warpgroups 1 and 2 each
// compute 64 rows of the tile. Persistent: one block per SM walks the tiles.
// A must be K-contiguous (row-major); B either K-contiguous (`_k`: b^T
// row-major, wgmma's default K-major B) or, for 16-bit types, N-contiguous
// (`_n`: b row-major, read transposed by wgmma). Edges: TMA fills
// out-of-range rows and columns with zeros, the epilogue stores only in-range
// elements.
//
// TF32 also comes with an M-contiguous A (`mm_wgr<BN>_tf32`): wgmma reads
// TF32 from shared memory K-major only, so the consumers load that A into
// registers themselves (rounding it to nearest on the way) and use wgmma's
// register-A form. The Rust side runs it on c^T = b^T a^T, so that a
// row-major b needs no transposed copy.
//
//   mm_wg<BN>_<dtype>_<lb>(tmA, tmB, GemmParams)  (tensor maps built in src/ops/matmul/sm90.rs)
//   mm_wgr<BN>_tf32(tmA, tmB, GemmParams)
#include <cuda.h>

#include "matmul_common.cuh"

namespace myns {
namespace sm90 {

// A k-tile is 128 bytes of K per row (64 half or 32 float elements): one
// 128-byte swizzle atom wide, 4 wgmma k-steps of 32 bytes. The block tile is
// BM x BN, BN in {64, 128, 256} (narrower tiles give small problems more
// blocks); narrower tiles take more stages in about the same shared memory.
constexpr int BM = 128, BK_BYTES = 128, CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
template <int BN> struct Tile {
  static constexpr int STAGES = BN == 256 ? 4 : BN == 128 ? 6 : 8;
  static constexpr int A_BYTES = BM * BK_BYTES, B_BYTES = BN * BK_BYTES, STAGE_BYTES = A_BYTES + B_BYTES;
  // Keep in sync with wg_smem in src/ops/matmul/sm90.rs: the stages, 1024
  // bytes to align them (128-byte swizzle), the barriers.
  static constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8;
};

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
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
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

// Two floats from shared memory (8-byte aligned address).
__device__ __forceinline__ float2 lds2(uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}

// Shared-memory matrix descriptor, 128-byte swizzle. K-major tiles (rows of
// 128 bytes of K, 8-row atoms 1024 bytes apart): sbo = 1024, lbo
// unused. MN-major tiles (rows along K of 64 MN-elements, 8 K-rows per atom;
// 64-wide MN blocks `lbo` bytes apart): lbo = block stride, sbo = 1024.
__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 62;
  return d;
}

// wgmma m64nNk16 (half types) or m64nNk8 (tf32), N in {64, 128, 256}: both
// operands from shared memory through descriptors, N / 2 float accumulators
// per thread. The instruction text needs literal operand numbers, so the
// accumulator lists and the operands after them come in one bundle per N.
#define MYNS_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define MYNS_D32(i) MYNS_D8(i), MYNS_D8(i + 8), MYNS_D8(i + 16), MYNS_D8(i + 24)
#define MYNS_R32 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define MYNS_R64 MYNS_R32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define MYNS_R128 MYNS_R64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
// N, accumulators, their register list, then the A and B descriptor, scale-d
// and (half types) transpose-B operand numbers, then the accumulator operands.
#define MYNS_N64 64, 32, MYNS_R32, "%32", "%33", "%34", ", 0, %35", MYNS_D32(0)
#define MYNS_N128 128, 64, MYNS_R64, "%64", "%65", "%66", ", 0, %67", MYNS_D32(0), MYNS_D32(32)
#define MYNS_N256 256, 128, MYNS_R128, "%128", "%129", "%130", ", 0, %131", MYNS_D32(0), MYNS_D32(32), MYNS_D32(64), MYNS_D32(96)
#define MYNS_KEEP(x) x
#define MYNS_DROP(x)
#define MYNS_WGMMA(T, KSTEP, TYPES, TRANS_ARGS, ...) MYNS_WGMMA_(T, KSTEP, TYPES, TRANS_ARGS, __VA_ARGS__)
#define MYNS_WGMMA_(T, KSTEP, TYPES, TRANS_ARGS, N, NACC, REGS, DA, DB, SC, TRANS, ...)                          \
  template <> struct Wgmma<T, N> {                                                                             \
    template <int TRANS_B>                                                                                     \
    static __device__ __forceinline__ void run(float (&d)[NACC], uint64_t da, uint64_t db) {                   \
      static_assert(TRANS_B == 0 || sizeof(T) == 2, "tf32 wgmma reads K-major B only");                      \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N KSTEP \
                   ".f32." TYPES " {" REGS "}, " DA ", " DB ", p, 1, 1" TRANS_ARGS(TRANS) ";\n}\n"          \
                   : __VA_ARGS__                                                                               \
                   : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));                                                  \
    }                                                                                                         \
  };
template <typename T, int N> struct Wgmma;
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_KEEP, MYNS_N64)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_KEEP, MYNS_N128)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_KEEP, MYNS_N256)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_KEEP, MYNS_N64)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_KEEP, MYNS_N128)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_KEEP, MYNS_N256)
// TF32: float32 operands in shared memory, of which the tensor cores read the
// top 19 bits (so callers round them first), both K-major.
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_DROP, MYNS_N64)
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_DROP, MYNS_N128)
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_DROP, MYNS_N256)

// wgmma m64nNk8 tf32 with A from registers (4 per thread, the layout of
// mma.m16n8k8's A per warp, warp w holding rows 16w..16w+15) and B from
// shared memory (K-major). The registers must stay untouched until the
// group completes.
#define MYNS_RS64 64, 32, MYNS_R32, "{%32,%33,%34,%35}", "%36", "%37", MYNS_D32(0)
#define MYNS_RS128 128, 64, MYNS_R64, "{%64,%65,%66,%67}", "%68", "%69", MYNS_D32(0), MYNS_D32(32)
#define MYNS_RS256 256, 128, MYNS_R128, "{%128,%129,%130,%131}", "%132", "%133", MYNS_D32(0), MYNS_D32(32), MYNS_D32(64), MYNS_D32(96)
#define MYNS_WGMMA_RS(...) MYNS_WGMMA_RS_(__VA_ARGS__)
#define MYNS_WGMMA_RS_(N, NACC, REGS, A, DB, SC, ...)                                                      \
  template <> struct WgmmaRS<N> {                                                                         \
    static __device__ __forceinline__ void run(float (&d)[NACC], const uint32_t (&a)[4], uint64_t db) {   \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N     \
                   "k8.f32.tf32.tf32 {" REGS "}, " A ", " DB ", p, 1, 1;\n}\n"                            \
                   : __VA_ARGS__                                                                          \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));                        \
    }                                                                                                    \
  };
template <int N> struct WgmmaRS;
MYNS_WGMMA_RS(MYNS_RS64)
MYNS_WGMMA_RS(MYNS_RS128)
MYNS_WGMMA_RS(MYNS_RS256)

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int W, int NACC>
__device__ __forceinline__ void wgmma_wait(float (&d)[NACC]) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(W) : "memory");
  // The accumulators are only final now: keep the compiler from using them earlier.
#pragma unroll
  for (int i = 0; i < NACC; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Keeps the compiler from reusing the registers of A fragments that an
// in-flight wgmma still reads.
__device__ __forceinline__ void keep_regs(uint32_t (&a)[BK_BYTES / 32][4]) {
#pragma unroll
  for (int i = 0; i < BK_BYTES / 32; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}

// A_REG (tf32 only): A is M-contiguous and goes through registers (see the
// top of this file); the split-K partials are then stored [N][M].
template <typename T, bool B_K, int BN, bool A_REG = false>
__device__ __forceinline__ void wg_gemm(const CUtensorMap* tmA, const CUtensorMap* tmB, const GemmParams& p) {
  using L = Tile<BN>;
  constexpr int STAGES = L::STAGES, A_BYTES = L::A_BYTES, STAGE_BYTES = L::STAGE_BYTES, NACC = BN / 2;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  auto a_stage = [&](int s) { return base + (uint32_t)s * STAGE_BYTES; };
  auto b_stage = [&](int s) { return base + (uint32_t)s * STAGE_BYTES + A_BYTES; };

  const int tid = threadIdx.x, wg = tid / 128;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int64_t per_batch = tiles_m * tiles_n, tiles = per_batch * p.batch * p.splits;
  constexpr int BK = BK_BYTES / sizeof(T);
  // Persistent: block b takes work items b, b + gridDim.x, ... (batch- and
  // split-major, then tile_of's L2-friendly order). The producer runs ahead
  // into the next item while the consumers store the last one. Item w covers
  // output tile (m0, n0) of batch z / splits, over k-tiles [k0, k0 + kt).
  struct Item {
    int64_t z;  // batch * splits + split
    int m0, n0, bz, k0, kt;
  };
  auto item = [&](int64_t w) {
    Item it;
    int64_t tm, tn;
    it.z = w / per_batch;
    tile_of(w - it.z * per_batch, tiles_m, tiles_n, tm, tn);
    it.m0 = static_cast<int>(tm * BM);
    it.n0 = static_cast<int>(tn * BN);
    it.bz = static_cast<int>(it.z / p.splits);
    const int64_t k_begin = (it.z - it.bz * p.splits) * p.k_chunk, k_end = min(K, k_begin + p.k_chunk);
    it.k0 = static_cast<int>(k_begin);
    it.kt = static_cast<int>((k_end - k_begin + BK - 1) / BK);
    return it;
  };

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), CONSUMERS * 4);  // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 64;\n");
    if (tid == 0) {
      int it = 0;
      for (int64_t w = blockIdx.x; w < tiles; w += gridDim.x) {
        const Item t = item(w);
        for (int kt = 0; kt < t.kt; ++kt, ++it) {
          const int s = it % STAGES, round = it / STAGES, k = t.k0 + kt * BK;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
          mbar_expect_tx(full(s), STAGE_BYTES);
          if constexpr (A_REG) {
            // M-contiguous A: boxes of 32 rows (128 bytes) by BK k-lines.
#pragma unroll
            for (int j = 0; j < BM / 32; ++j) tma_load(a_stage(s) + j * BK * 128, tmA, full(s), t.m0 + 32 * j, k, t.bz);
          } else {
            tma_load(a_stage(s), tmA, full(s), k, t.m0, t.bz);
          }
          if constexpr (B_K) {
            tma_load(b_stage(s), tmB, full(s), k, t.n0, t.bz);
          } else {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j) tma_load(b_stage(s) + j * 64 * BK_BYTES, tmB, full(s), t.n0 + j * 64, k, t.bz);
          }
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 216;\n");
    const int cw = wg - 1, warp = (tid / 32) % 4, lane = tid % 32;
    const int g = lane / 4, t4 = lane % 4;
    // A_REG: fragment rows g and g + 8 of this warp are tile rows pr and
    // pr + 1, so one 8-byte load reads both, and the warp's loads fall on
    // distinct banks under the 128-byte swizzle (the two half-warps each
    // cover 8 of the 16-byte chunks of a line). The epilogue uses the same map.
    const int pr = cw * 64 + (warp >> 1) * 32 + (warp & 1) * 8 + (g & 1) * 2 + (g & 2) * 8 + (g >> 2) * 4;
    const uint32_t a_off = (pr >> 5) * (BK * 128) + (pr & 3) * 4, a_chunk = (pr & 31) >> 2;
    // One k-tile (4 wgmma k-steps) with A through registers: loads this
    // thread's fragments, rounded to TF32 (to nearest): (pr, k), (pr + 1, k),
    // (pr, k + 4), (pr + 1, k + 4) with k = 8 kk + t4; then issues the wgmmas.
    auto mma_rs = [&](float (&d)[NACC], uint32_t (&af)[BK_BYTES / 32][4], int s) {
#pragma unroll
      for (int kk = 0; kk < BK_BYTES / 32; ++kk)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t line = kk * 8 + h * 4 + t4;
          const float2 v = lds2(a_stage(s) + a_off + line * 128 + ((a_chunk ^ (line & 7)) << 4));
          af[kk][2 * h] = to_tf32(v.x);
          af[kk][2 * h + 1] = to_tf32(v.y);
        }
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK_BYTES / 32; ++kk) WgmmaRS<BN>::run(d, af[kk], make_desc(b_stage(s) + kk * 32, 16, 1024));
    };
    uint32_t af[2][BK_BYTES / 32][4];  // A_REG: double-buffered (one group stays in flight)
    int it = 0;
    for (int64_t w = blockIdx.x; w < tiles; w += gridDim.x) {
      const Item t = item(w);
      const int m0 = t.m0, n0 = t.n0;
      float d[NACC];
#pragma unroll
      for (int i = 0; i < NACC; ++i) d[i] = 0.f;
      int prev = -1;
      for (int kt = 0; kt < t.kt; ++kt, ++it) {
        const int s = it % STAGES, round = it / STAGES;
        mbar_wait(full(s), round & 1);
        if constexpr (A_REG) {
          // Constant indices keep af in registers (af[kt & 1] would not).
          if (kt & 1) {
            mma_rs(d, af[1], s);
          } else {
            mma_rs(d, af[0], s);
          }
        } else {
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < BK_BYTES / 32; ++kk) {
            // This warpgroup's 64 rows start 64 * 128 bytes into the A tile; one
            // wgmma k-step (k16, or k8 for tf32) is 32 bytes along a K-major
            // row, 16 rows of an MN-major (16-bit) tile.
            const uint64_t da = make_desc(a_stage(s) + cw * 64 * 128 + kk * 32, 16, 1024);
            if constexpr (B_K) {
              Wgmma<T, BN>::template run<0>(d, da, make_desc(b_stage(s) + kk * 32, 16, 1024));
            } else {
              Wgmma<T, BN>::template run<1>(d, da, make_desc(b_stage(s) + kk * 16 * 128, 64 * BK_BYTES, 1024));
            }
          }
        }
        wgmma_commit();
        // Keep one group in flight; the one before it is done with its stage.
        wgmma_wait<1>(d);
        if constexpr (A_REG) {
          keep_regs(af[0]);
          keep_regs(af[1]);
        }
        if (prev >= 0 && lane == 0) mbar_arrive(empty(prev));
        prev = s;
      }
      wgmma_wait<0>(d);
      if constexpr (A_REG) {
        keep_regs(af[0]);
        keep_regs(af[1]);
      }
      if (prev >= 0 && lane == 0) mbar_arrive(empty(prev));

      // Accumulator layout (per warp: 16 rows): d[4j + {0,1}] row g, cols 8j + 2t + {0,1};
      // d[4j + {2,3}] row g + 8 (A_REG: rows pr and pr + 1).
      if constexpr (A_REG) {
        // Stores pair rows pr and pr + 1 (adjacent along the output's unit
        // stride when it is c^T of a row-major c).
        const int64_t r = m0 + pr;
        const bool split = p.splits > 1;
        float* wp = p.ws + t.z * M * N;
        T* c = static_cast<T*>(p.c) + (int64_t)t.bz * p.scb;
        const bool paired = split ? M % 2 == 0 : p.scm == 1 && p.scn % 2 == 0 && p.scb % 2 == 0;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int64_t n = n0 + 8 * j + 2 * t4;
          if (split) {
            store2<float>(wp, n, r, d[4 * j], d[4 * j + 2], N, M, M, 1, paired);
            store2<float>(wp, n + 1, r, d[4 * j + 1], d[4 * j + 3], N, M, M, 1, paired);
          } else {
            store2<T>(c, n, r, d[4 * j], d[4 * j + 2], N, M, p.scn, p.scm, paired);
            store2<T>(c, n + 1, r, d[4 * j + 1], d[4 * j + 3], N, M, p.scn, p.scm, paired);
          }
        }
        continue;
      }
      const int64_t r = m0 + cw * 64 + warp * 16 + g;
      if (p.splits > 1) {
        // Split-K: float32 partials, [batch][splits][M][N], summed by mm_splitk_reduce.
        float* wp = p.ws + t.z * M * N;
        const bool paired = N % 2 == 0;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          store2<float>(wp, r, n0 + 8 * j + 2 * t4, d[4 * j], d[4 * j + 1], M, N, N, 1, paired);
          store2<float>(wp, r + 8, n0 + 8 * j + 2 * t4, d[4 * j + 2], d[4 * j + 3], M, N, N, 1, paired);
        }
        continue;
      }
      T* c = static_cast<T*>(p.c) + (int64_t)t.bz * p.scb;
      if (p.scn == 1 && p.scm % 2 == 0 && p.scb % 2 == 0 && n0 + BN <= N) {
        // Interior columns, unit stride: paired stores, row checks only.
        using P = typename Pair<T>::type;
        P* row0 = reinterpret_cast<P*>(c + r * p.scm + n0 + 2 * t4);
        P* row1 = reinterpret_cast<P*>(c + (r + 8) * p.scm + n0 + 2 * t4);
        const bool ok0 = r < M, ok1 = r + 8 < M;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          if (ok0) row0[4 * j] = Pair<T>::make(d[4 * j], d[4 * j + 1]);
          if (ok1) row1[4 * j] = Pair<T>::make(d[4 * j + 2], d[4 * j + 3]);
        }
      } else {
        // Right edge (or odd pitch): element stores, walking one pointer per row.
        const int64_t scn = p.scn;
        T* q0 = c + r * p.scm + (n0 + 2 * t4) * scn;
        T* q1 = q0 + 8 * p.scm;
        const bool ok0 = r < M, ok1 = r + 8 < M;
        int nn = n0 + 2 * t4;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j, nn += 8, q0 += 8 * scn, q1 += 8 * scn) {
          if (ok0 && nn < N) q0[0] = from_acc<T>(d[4 * j]);
          if (ok0 && nn + 1 < N) q0[scn] = from_acc<T>(d[4 * j + 1]);
          if (ok1 && nn < N) q1[0] = from_acc<T>(d[4 * j + 2]);
          if (ok1 && nn + 1 < N) q1[scn] = from_acc<T>(d[4 * j + 3]);
        }
      }
    }
  }
}

}  // namespace sm90
}  // namespace myns

using myns::GemmParams;

// float32 operand -> K-major copy rounded to TF32 (to nearest), for the tf32
// kernels: their tensor cores would truncate. Source element (z, r, k) at
// z * sb + r * sr + k * sk; destination rows of `ld` (>= k) floats.
struct Tf32Copy {
  const float* src;
  float* dst;
  int64_t batch, rows, k, sb, sr, sk, ld;
};

// 32 x 32 tiles through shared memory with 32 x 8 threads: reads run along
// whichever of k and rows is contiguous in the source, writes along k.
extern "C" __global__ void __launch_bounds__(256) mm_tf32_round_copy(const Tf32Copy p) {
  __shared__ float tile[32][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool along_k = p.sk == 1 || p.sr != 1;
  const int64_t r0 = (int64_t)blockIdx.x * 32, k_tiles = (p.k + 31) / 32;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const float* src = p.src + z * p.sb;
    float* dst = p.dst + z * p.rows * p.ld;
    for (int64_t kt = blockIdx.y; kt < k_tiles; kt += gridDim.y) {
      const int64_t k0 = kt * 32;
      for (int i = ty; i < 32; i += 8) {
        const int rr = along_k ? i : tx, kk = along_k ? tx : i;
        if (r0 + rr < p.rows && k0 + kk < p.k) tile[rr][kk] = src[(r0 + rr) * p.sr + (k0 + kk) * p.sk];
      }
      __syncthreads();
      for (int i = ty; i < 32; i += 8)
        if (r0 + i < p.rows && k0 + tx < p.k) dst[(r0 + i) * p.ld + k0 + tx] = __uint_as_float(myns::to_tf32(tile[i][tx]));
      __syncthreads();
    }
  }
}


// The same for a contiguous source whose rows are whole 16-byte packs (the
// copy is then the identity layout): a flat, vectorised pass.
extern "C" __global__ void __launch_bounds__(256) mm_tf32_round_flat(const float4* src, float4* dst, int64_t n4) {
  for (int64_t i = blockIdx.x * 256ll + threadIdx.x; i < n4; i += gridDim.x * 256ll) {
    const float4 v = src[i];
    dst[i] = make_float4(__uint_as_float(myns::to_tf32(v.x)), __uint_as_float(myns::to_tf32(v.y)),
                         __uint_as_float(myns::to_tf32(v.z)), __uint_as_float(myns::to_tf32(v.w)));
  }
}

#define MYNS_WG(dt, T, lb, BKC, BN)                                                                     \
  extern "C" __global__ void __launch_bounds__(myns::sm90::THREADS, 1)                                  \
      mm_wg##BN##_##dt##_##lb(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, \
                              const GemmParams p) {                                                      \
    myns::sm90::wg_gemm<T, BKC, BN>(&tmA, &tmB, p);                                                      \
  }
#define MYNS_WG_ALL(BN)                      \
  MYNS_WG(bf16, __nv_bfloat16, k, true, BN)  \
  MYNS_WG(bf16, __nv_bfloat16, n, false, BN) \
  MYNS_WG(f16, __half, k, true, BN)          \
  MYNS_WG(f16, __half, n, false, BN)         \
  MYNS_WG(tf32, float, k, true, BN)
MYNS_WG_ALL(256)
MYNS_WG_ALL(128)
MYNS_WG_ALL(64)

#define MYNS_WGR(BN)                                                                                   \
  extern "C" __global__ void __launch_bounds__(myns::sm90::THREADS, 1)                                  \
      mm_wgr##BN##_tf32(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, \
                        const GemmParams p) {                                                            \
    myns::sm90::wg_gemm<float, true, BN, true>(&tmA, &tmB, p);                                           \
  }
MYNS_WGR(256)
MYNS_WGR(128)
MYNS_WGR(64)
