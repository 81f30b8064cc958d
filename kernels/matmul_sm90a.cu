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
// Block tile BM x BN x (128 bytes of K), BM 128 (or 64: `mm_wgh*`), BN 256,
// 192, 128 or 64 (and 320, 16-bit cooperative: `mm_wg320_*`, two wgmmas a
// k-step; 96, 112, 144, 160 and 176, 16-bit cooperative with B K-major,
// `mm_wg<BN>_*_{kk,mk}`, of which 96 stores from registers; and 144 on 64 rows with
// B K-major, `mm_wgh144_*_{kk,mk}`;
// src/gemm/tiles.rs, through gemm_tiles.h); three
// warpgroups: warpgroup 0 is the producer (one thread issues the TMA
// copies), warpgroups 1 and 2 the consumers. Two schedules: cooperative
// (`mm_wg*`: the consumers share each 128-row tile, 64 rows each) and
// ping-pong (`mm_wgp*` on 128-row tiles, `mm_wgh*` on 64-row ones: each
// consumer computes whole tiles, the two taking turns at the tensor cores,
// so that one's epilogue overlaps the other's main loop). The 64-row tiles
// are for products too small to give every SM a 128-row tile (M = 128:
// twice the tiles, no split K). Persistent: one block per SM walks the tiles.
// Split-K (`p.splits` K ranges per tile): the last block of a tile's ranges
// to finish adds the others' partials and stores the tile (see the
// consumers' `p.splits > 1` step).
// A and B (16-bit types) are each K-contiguous or MN-contiguous (`_<a><b>`,
// a in {k, m}, b in {k, n}); wgmma reads MN-major tiles transposed. Edges:
// TMA fills out-of-range rows and columns with zeros, the epilogue stores
// only in-range elements.
//
// Clusters: the kernels also run in thread-block clusters of two blocks
// along x (launched so by src/gemm/sm90.rs; the kernel reads the cluster's
// size): the pair computes two output tiles one above the other (same
// columns), so each block loads its own A tile and one half of the shared B
// tile, multicast into both blocks' shared memory: B's L2 reads halve. Or
// (`p.share_a`, cooperative tiles with A read through TMA) the pair
// computes two tiles side by side (same rows) and shares A's tile the same
// way. A stage is then free only when the consumers of both blocks are done with
// it, so consumers arrive on both blocks' empty barriers. Or (`p.kcl` 2 or
// 4, the `mm_wgk*` / `mm_wgrk*` kernels: cooperative tiles up to 192 wide;
// and the 64-row `mm_wgh*` / `mm_wgrh*` ones) the blocks of a cluster
// compute one tile over `kcl` K ranges and add their float32 partials
// through distributed shared memory: split K with no workspace, no fence
// and no second pass (see the consumers' `kc` step).
//
// Output: cooperative 16-bit kernels (but `WGQ`'s 96-wide one) with a unit-stride output
// (`p.tma_store`, set by src/gemm/sm90.rs) write each consumer's 64 x BN
// half into shared memory (the 256-wide tile in two rounds of 128 columns,
// which leaves room for a fourth stage); with 16-byte aligned rows (1) they
// store it with TMA (boxes of 64 columns, or of 16 where BN is no multiple
// of 64) and go straight on to the next tile while the copy
// engine writes it out; with other rows (2: N = 4095, a vocabulary of
// 32001), which TMA cannot address, each row shifted to its global
// alignment and copied out by the warps, its aligned middle in 16-byte
// vectors. Accumulating (c += a @ b), (1) adds the staged tile with TMA's
// reduce-add store instead, and (2) is not taken. The others store from
// registers.
//
// TF32 reads K-major operands only (`mm_wg<BN>_tf32_kk`), and also comes
// with an M-contiguous A (`mm_wgr<BN>_tf32`): wgmma reads TF32 from shared
// memory K-major only, so the consumers load that A into registers
// themselves and use wgmma's register-A form. The Rust side runs it on
// c^T = b^T a^T, so that a row-major b needs no transposed copy. It also
// runs ping-pong on 64-row tiles (`mm_wgrh<BN>_tf32`): one m64nBN wgmma
// chain per tile, as cuBLAS runs TF32 1024^3 (64 x 128), where the
// cooperative 128 x 64 tile issues two m64n64 chains per block. TF32
// operands are rounded to nearest (ties to even) by the TMA loads
// themselves: src/gemm/sm90.rs encodes their tensor maps as TFLOAT32
// (bench/explore/tf32-tma/); the tensor cores alone would drop the low 13
// mantissa bits.
//
//   mm_wg<BN>_<dtype>_<a><b>(tmA, tmB, tmC, GemmParams)   (tensor maps built in src/gemm/sm90.rs)
//   mm_wgp<BN>_<dtype>_<a><b>(tmA, tmB, tmC, GemmParams)
//   mm_wgh<BN>_<dtype>_<a><b>(tmA, tmB, tmC, GemmParams)
//   mm_wgr<BN>_tf32(tmA, tmB, tmC, GemmParams)
//   mm_wgrh<BN>_tf32(tmA, tmB, tmC, GemmParams)
//   mm_wgk<BN>_<dtype>_<a><b>, mm_wgk<BN>_tf32_kk, mm_wgrk<BN>_tf32: as mm_wg*, mm_wgr*, summing K ranges in a cluster (p.kcl; mm_wgh*, mm_wgrh* too)
#include <cuda.h>

#include "matmul_common.cuh"
#include "gemm_tiles.h"
#include "tma.cuh"

namespace myns {
namespace sm90 {

// A k-tile is 128 bytes of K per row (64 half or 32 float elements): one
// 128-byte swizzle atom wide, 4 wgmma k-steps of 32 bytes. Narrower tiles
// take more stages in about the same shared memory.
constexpr int BK_BYTES = MYNS_WG_BK_BYTES, CONSUMERS = 2;
// The register-A kernel issues each wgmma k-step as a group of its own and
// keeps RS_PENDING groups in flight as it loads the next k-step's fragments
// (cuBLAS's TF32 kernels keep 2): 1 or 2, as each of its 4 fragment buffers
// is reloaded RS_PENDING + 1 groups after its reader.
#ifndef MYNS_RS_PENDING
#define MYNS_RS_PENDING 2
#endif
constexpr int RS_PENDING = MYNS_RS_PENDING;
// The narrowest cooperative tile that does so. Narrower wgmmas (m64n128k8
// and less) are too short to hide the next k-step's loads: forced 128-wide
// tiles ran 6-8% slower that way (bench/explore/tf32-kstep/), so they keep
// a k-tile as one group, one group in flight. The 64-row ping-pong tiles,
// whose one consumer at a time is the only wgmma chain of its SM, do so at
// every width (H200, 1024^3 on 64 x 128 tiles: 0.78 -> 0.90 of cuBLAS;
// bench/explore/tf32-half/).
#ifndef MYNS_RS_KSTEP_BN
#define MYNS_RS_KSTEP_BN 192
#endif
constexpr int RS_KSTEP_BN = MYNS_RS_KSTEP_BN;
static_assert(RS_PENDING >= 1 && RS_PENDING + 2 <= BK_BYTES / 32, "a fragment buffer is reloaded RS_PENDING + 1 groups after its reader");
constexpr int THREADS = MYNS_WG_THREADS;
static_assert(THREADS == 128 * (CONSUMERS + 1), "one producer and two consumer warpgroups");
// OUT16: 16-bit inputs and output (else TF32 in, float32 out). BM: 128, or
// 64 (ping-pong only).
template <int BN, bool PP, bool OUT16, int BM> struct Tile {
  static_assert(BM == MYNS_WG_BM || (PP && BM == MYNS_WGH_BM), "64-row tiles are ping-pong");
  static constexpr int BASE_STAGES = !PP ? MYNS_WG_STAGES(BN) : BM == MYNS_WGH_BM ? MYNS_WGH_STAGES(BN) : MYNS_WGP_STAGES(BN);
  static_assert(BASE_STAGES > 0, "no such tile in src/gemm/tiles.rs");
  static constexpr int A_BYTES = BM * BK_BYTES, B_BYTES = BN * BK_BYTES, STAGE_BYTES = A_BYTES + B_BYTES;
  // Cooperative 16-bit tiles stage the output in shared memory, each
  // consumer's 64-row half in rounds of TMA_COLS columns (TMA stores) or
  // BULK_COLS columns (rows the warps copy out, C_PITCH bytes apart: 16 more than
  // a round's row, which starts at its global address's offset from a
  // 16-byte boundary); C_HALF bytes per consumer. Cooperative TF32 tiles
  // spend that shared memory on more stages (WgTile::stages_for).
  static constexpr int TMA_COLS = MYNS_WG_TMA_COLS(BN), BULK_COLS = MYNS_WG_BULK_COLS(BN), C_PITCH = BULK_COLS * 2 + 16;
  // TMA stores: boxes of 64 rows by C_BOX columns, 64 (128 bytes, 128-byte
  // swizzle) or, where a round is no multiple of 64 (`WGQ`), 16 (32 bytes,
  // no swizzle): WgTile::c_box in src/gemm/tiles.rs, which also encodes the
  // output's tensor map. TMA_COLS 0 (`WGQ`'s 96): stored from registers.
  static constexpr int C_BOX = PP ? 64 : MYNS_WG_C_BOX(BN), C_BOX_BYTES = 64 * C_BOX * 2;
  static constexpr bool STAGED = !PP && OUT16 && TMA_COLS > 0;
  // (Divisors guarded: nvcc warns of a zero one even past `||`.)
  static_assert(PP || TMA_COLS == 0 || (BN % (TMA_COLS ? TMA_COLS : 1) == 0 && TMA_COLS % C_BOX == 0 && BN % (BULK_COLS ? BULK_COLS : 1) == 0 && BULK_COLS % 8 == 0),
                "staged rounds");
  static constexpr int C_HALF = TMA_COLS == 0 ? 0 : 64 * (TMA_COLS * 2 > C_PITCH ? TMA_COLS * 2 : C_PITCH);
  static constexpr int C_BYTES = STAGED ? 2 * C_HALF : 0;
  static constexpr int STAGES = BASE_STAGES + (!PP && !OUT16 ? 2 * C_HALF / STAGE_BYTES : 0);
  // Cooperative tiles up to 128 wide: the producer publishes each work
  // item for the consumers (see `slot`; on the wider tiles that ran 1-4%
  // slower, bench/explore/bmm-small/).
  static constexpr bool PUBLISH = !PP && BN <= 128;
  // Full/empty barriers per stage, two turn barriers, the consumers'
  // split-K words (see `last_of`); then, where PUBLISH, a work item per
  // stage (32 bytes each).
  static constexpr int ITEM_OFF = ((2 * STAGES + 3) * 8 + 15) / 16 * 16;
  static constexpr int BAR_BYTES = PUBLISH ? ITEM_OFF + 32 * STAGES : (2 * STAGES + 3) * 8;
  static_assert(BAR_BYTES <= 512, "the barriers fit in the alignment's slack or after it");
  // As WgTile::smem in src/gemm/tiles.rs: the stages, the output region,
  // 1024 bytes to align them (128-byte swizzle), which also hold the
  // barriers (see `bars`).
  static constexpr int SMEM = STAGES * STAGE_BYTES + C_BYTES + 1024;
  static_assert(SMEM <= 227 * 1024, "more shared memory than an H100 block has");
};

// Launched as a programmatic dependent (src/cuda.rs `LaunchOpts::after_previous`): the
// block may start while the stream's previous kernel finishes, and waits
// here until that kernel has completed and its writes are visible.
__device__ __forceinline__ void wait_previous_grid() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// Arrives on the barrier at shared address `bar` in block `cta` of the
// cluster. Default (CTA-scope) release, as CUTLASS's ClusterBarrier: a
// cluster-scope release made every consumer warp wait at each stage, and
// ran the pairs at half the speed of single blocks on the H100.
__device__ __forceinline__ void mbar_arrive_cta(uint32_t bar, uint32_t cta) {
  asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [r];\n}\n" ::"r"(bar), "r"(cta)
               : "memory");
}

// Split K in a cluster: a work item's two cluster barriers, as a producer
// thread meets them (the consumers' partials are written; the owners have
// read them). Not `.aligned`: the two loader threads (0 and 32) meet them apart
// from their warps.
__device__ __forceinline__ void kc_meet() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\nbarrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// A TMA load written to the same shared address in every block of `mask`
// (cluster ranks), each block's barrier at `bar` counting its bytes.
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
      : "memory");
}

// Four floats into shared memory (16-byte aligned; a peer reads them back
// with ld_cluster4, matmul_common.cuh).
__device__ __forceinline__ void sts128f(uint32_t addr, float x, float y, float z, float w) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
// Named barrier `id` over `count` threads (ids 1 and 2: the consumer
// warpgroups; 3: both).
__device__ __forceinline__ void bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// Four 8 x 8 16-bit matrices from registers into shared memory; lane l
// gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void stmatrix4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}
// 16 bits into shared memory.
__device__ __forceinline__ void sts16(uint32_t addr, uint16_t v) { asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(v) : "memory"); }
// Shared-memory writes before it are visible to TMA after it.
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void tma_store(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
// As tma_store, but adds the tile to what the output holds (the TMA unit
// reads, adds and writes back in the output's type): the accumulate
// epilogue's staged form.
__device__ __forceinline__ void tma_store_add(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's committed TMA stores have read their shared memory.
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Fetches a tensor map into the TMA unit's cache ahead of its first use.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Two floats from shared memory (8-byte aligned address).
__device__ __forceinline__ float2 lds2(uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}

// 16 bytes from shared memory, and into global memory (both 16-byte
// aligned); one 16-bit element from shared memory.
__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void stg128(void* dst, uint4 v) { *reinterpret_cast<uint4*>(dst) = v; }
template <typename T>
__device__ __forceinline__ T lds_elem(uint32_t addr) {
  uint16_t u;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(u) : "r"(addr) : "memory");
  T x;
  memcpy(&x, &u, 2);
  return x;
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
// `d` with its start address moved on by `units` of 16 bytes. The address
// field holds address / 16 in the low bits, and shared addresses stay below
// 2^18, so the sum never carries out of it: each stage and k-step costs the
// consumers one 32-bit add, not a rebuilt descriptor.
__device__ __forceinline__ uint64_t desc_add(uint64_t d, uint32_t units) {
  return (d & 0xFFFFFFFF00000000ull) | static_cast<uint32_t>(static_cast<uint32_t>(d) + units);
}

// Of v loads (a thread's float4s in the K-range sums, its column pairs in
// the accumulating epilogue), how many go in flight at once: 8 where that
// divides v, else 6 (v = 18: the 144-wide tile), else all.
constexpr int sum_group(int v) { return v % 8 == 0 ? 8 : v % 6 == 0 ? 6 : v; }

// wgmma m64nNk16 (half types) or m64nNk8 (tf32), N in {64, 96, 112, 128, 144, 160, 176, 192, 256} (96 to 176: 16-bit only): both
// operands from shared memory through descriptors, N / 2 float accumulators
// per thread. The instruction text needs literal operand numbers, so the
// accumulator lists and the operands after them come in one bundle per N.
#define MYNS_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define MYNS_D32(i) MYNS_D8(i), MYNS_D8(i + 8), MYNS_D8(i + 16), MYNS_D8(i + 24)
#define MYNS_R32 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define MYNS_R48 MYNS_R32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47"
#define MYNS_R56 MYNS_R48 ",%48,%49,%50,%51,%52,%53,%54,%55"
#define MYNS_R64 MYNS_R32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define MYNS_R72 MYNS_R64 ",%64,%65,%66,%67,%68,%69,%70,%71"
#define MYNS_R80 MYNS_R64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79"
#define MYNS_R88 MYNS_R80 ",%80,%81,%82,%83,%84,%85,%86,%87"
#define MYNS_R96 MYNS_R64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"
#define MYNS_R128 MYNS_R64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
// N, accumulators, their register list, then the A and B descriptor,
// scale-d and transpose-A/B operand numbers, then the accumulator operands.
#define MYNS_N64 64, 32, MYNS_R32, "%32", "%33", "%34", "%35", "%36", MYNS_D32(0)
#define MYNS_N96 96, 48, MYNS_R48, "%48", "%49", "%50", "%51", "%52", MYNS_D32(0), MYNS_D8(32), MYNS_D8(40)
#define MYNS_N112 112, 56, MYNS_R56, "%56", "%57", "%58", "%59", "%60", MYNS_D32(0), MYNS_D8(32), MYNS_D8(40), MYNS_D8(48)
#define MYNS_N128 128, 64, MYNS_R64, "%64", "%65", "%66", "%67", "%68", MYNS_D32(0), MYNS_D32(32)
#define MYNS_N144 144, 72, MYNS_R72, "%72", "%73", "%74", "%75", "%76", MYNS_D32(0), MYNS_D32(32), MYNS_D8(64)
#define MYNS_N160 160, 80, MYNS_R80, "%80", "%81", "%82", "%83", "%84", MYNS_D32(0), MYNS_D32(32), MYNS_D8(64), MYNS_D8(72)
#define MYNS_N176 176, 88, MYNS_R88, "%88", "%89", "%90", "%91", "%92", MYNS_D32(0), MYNS_D32(32), MYNS_D8(64), MYNS_D8(72), MYNS_D8(80)
#define MYNS_N192 192, 96, MYNS_R96, "%96", "%97", "%98", "%99", "%100", MYNS_D32(0), MYNS_D32(32), MYNS_D32(64)
#define MYNS_N256 256, 128, MYNS_R128, "%128", "%129", "%130", "%131", "%132", MYNS_D32(0), MYNS_D32(32), MYNS_D32(64), MYNS_D32(96)
#define MYNS_TRANS(TA, TB) ", " TA ", " TB
#define MYNS_NOTRANS(TA, TB)
#define MYNS_WGMMA(T, KSTEP, TYPES, TRANS_ARGS, ...) MYNS_WGMMA_(T, KSTEP, TYPES, TRANS_ARGS, __VA_ARGS__)
#define MYNS_WGMMA_(T, KSTEP, TYPES, TRANS_ARGS, N, NACC, REGS, DA, DB, SC, TA, TB, ...)                    \
  template <> struct Wgmma<T, N> {                                                                         \
    template <int TRANS_A, int TRANS_B>                                                                    \
    static __device__ __forceinline__ void run(float (&d)[NACC], uint64_t da, uint64_t db) {               \
      static_assert((TRANS_A == 0 && TRANS_B == 0) || sizeof(T) == 2, "tf32 wgmma reads K-major only");  \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N KSTEP \
                   ".f32." TYPES " {" REGS "}, " DA ", " DB ", p, 1, 1" TRANS_ARGS(TA, TB) ";\n}\n"       \
                   : __VA_ARGS__                                                                           \
                   : "l"(da), "l"(db), "r"(1), "n"(TRANS_A), "n"(TRANS_B));                                \
    }                                                                                                     \
  };
template <typename T, int N> struct Wgmma;
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N64)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N128)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N144)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N96)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N112)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N160)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N176)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N192)
MYNS_WGMMA(__nv_bfloat16, "k16", "bf16.bf16", MYNS_TRANS, MYNS_N256)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N64)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N128)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N144)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N96)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N112)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N160)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N176)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N192)
MYNS_WGMMA(__half, "k16", "f16.f16", MYNS_TRANS, MYNS_N256)
// TF32: float32 operands in shared memory, of which the tensor cores read the
// top 19 bits (so the TMA loads round them first), both K-major.
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_NOTRANS, MYNS_N64)
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_NOTRANS, MYNS_N128)
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_NOTRANS, MYNS_N192)
MYNS_WGMMA(float, "k8", "tf32.tf32", MYNS_NOTRANS, MYNS_N256)

// wgmma m64nNk8 tf32 with A from registers (4 per thread, the layout of
// mma.m16n8k8's A per warp, warp w holding rows 16w..16w+15) and B from
// shared memory (K-major). The registers must stay untouched until the
// group completes.
#define MYNS_RS64 64, 32, MYNS_R32, "{%32,%33,%34,%35}", "%36", "%37", MYNS_D32(0)
#define MYNS_RS128 128, 64, MYNS_R64, "{%64,%65,%66,%67}", "%68", "%69", MYNS_D32(0), MYNS_D32(32)
#define MYNS_RS144 144, 72, MYNS_R72, "{%72,%73,%74,%75}", "%76", "%77", MYNS_D32(0), MYNS_D32(32), MYNS_D8(64)
#define MYNS_RS192 192, 96, MYNS_R96, "{%96,%97,%98,%99}", "%100", "%101", MYNS_D32(0), MYNS_D32(32), MYNS_D32(64)
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
MYNS_WGMMA_RS(MYNS_RS144)  // (named by the 144-wide tile's code, which runs no TF32)
MYNS_WGMMA_RS(MYNS_RS192)
MYNS_WGMMA_RS(MYNS_RS256)

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Keeps the compiler from reusing the registers of A fragments that an
// in-flight wgmma still reads.
__device__ __forceinline__ void keep_regs(uint32_t (&a)[BK_BYTES / 32][4]) {
#pragma unroll
  for (int i = 0; i < BK_BYTES / 32; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}

// Keeps the accumulators' values in registers here (the compiler would
// otherwise set them where they are first read).
template <int MH, int NACC>
__device__ __forceinline__ void keep_acc(float (&d)[MH][NACC]) {
#pragma unroll
  for (int h = 0; h < MH; ++h)
#pragma unroll
    for (int i = 0; i < NACC; ++i) asm volatile("" : "+f"(d[h][i]));
}

// The accumulators of every m64 half are final only after the wait: keep
// the compiler from using them earlier.
template <int W, int MH, int NACC>
__device__ __forceinline__ void wgmma_wait_all(float (&d)[MH][NACC]) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(W) : "memory");
#pragma unroll
  for (int h = 0; h < MH; ++h)
#pragma unroll
    for (int i = 0; i < NACC; ++i) asm volatile("" : "+f"(d[h][i])::"memory");
}

// ---- end of the PTX wrappers (tests/matmul_emulation/run.sh replaces
// what is above from `MYNS_D8` on with its emulation of them).

template <typename T>
__device__ __forceinline__ uint32_t pack2(float x, float y) {
  auto v = Pair<T>::make(x, y);
  return *reinterpret_cast<uint32_t*>(&v);
}

// N = 320 (the 128 x 320 tile, 16-bit): wgmma goes up to N = 256, so the
// tile's B rows are two wgmmas', 192 and 128 wide; the second's B starts
// 192 rows on (K-major) or three 64-column boxes of BK lines on (N-major,
// TRANS_B), and takes the last 64 accumulators.
template <typename T> struct Wgmma<T, 320> {
  template <int TRANS_A, int TRANS_B>
  static __device__ __forceinline__ void run(float (&d)[160], uint64_t da, uint64_t db) {
    constexpr uint32_t B2 = (TRANS_B ? 3 * (BK_BYTES / sizeof(T)) * 128 : 192 * 128) / 16;
    Wgmma<T, 192>::template run<TRANS_A, TRANS_B>(*reinterpret_cast<float(*)[96]>(&d[0]), da, db);
    Wgmma<T, 128>::template run<TRANS_A, TRANS_B>(*reinterpret_cast<float(*)[64]>(&d[96]), da, desc_add(db, B2));
  }
};

// A_K / B_K: the operand is K-contiguous (else MN-contiguous; 16-bit types).
// PP: ping-pong schedule (see the top of this file). A_REG (tf32 only,
// cooperative or ping-pong on 64 rows): A is M-contiguous and goes through
// registers. BM: the tile's rows, 128 or 64 (ping-pong).
template <typename T, bool A_K, bool B_K, int BN, bool PP, bool A_REG, int BM, bool KC>
__device__ __forceinline__ void wg_gemm(const CUtensorMap* tmA, const CUtensorMap* tmB, const CUtensorMap* tmC, const GemmParams& p) {
  using L = Tile<BN, PP, sizeof(T) == 2, BM>;
  constexpr int STAGES = L::STAGES, A_BYTES = L::A_BYTES, STAGE_BYTES = L::STAGE_BYTES, NACC = BN / 2;
  constexpr int BK = BK_BYTES / sizeof(T);
  // m64 halves of the tile one consumer computes: all in ping-pong.
  constexpr int MH = PP ? BM / 64 : 1;
  static_assert(!(PP && A_REG) || BM == 64, "the register-A kernel is cooperative or on 64-row tiles");
  static_assert((A_K && B_K) || sizeof(T) == 2 || A_REG, "tf32 tiles are K-major");
  static_assert(B_K || BN % 64 == 0, "an N-major B tile is loaded in 64-column boxes");
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  const uint32_t c_base = base + STAGES * STAGE_BYTES;
  // The barriers go below `base` where aligning it left room for them, else
  // after the output region (within the 1024 bytes SMEM keeps for aligning).
  const uint32_t bars = base - raw >= L::BAR_BYTES ? raw : c_base + L::C_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  // Ping-pong: consumer c may start a main loop once turn(c) completes.
  auto turn = [&](int c) { return bars + 8u * (2 * STAGES + c); };
  // Split-K: consumer c's word saying whether its block is the last of a
  // tile's K ranges to arrive.
  auto last_of = [&](int c) { return reinterpret_cast<volatile int*>(smem_raw + (bars - raw) + 8u * (2 * STAGES + 2) + 4u * c); };
  // L::PUBLISH (not the kernels summing K ranges in a cluster): the
  // producer writes the block's j-th work item into slot j % STAGES before
  // the expect_tx of the item's first stage (a release), after that stage
  // was freed; the consumers read it once that stage's full barrier
  // completes (an acquire) instead of working it out. Its divisions, a
  // dependent chain of about 0.3 us, sat between one tile's epilogue and
  // the next tile's first wgmma (H200, bench/explore/bmm-small/: kernel
  // times 1-7% shorter on short-K products). A slot is written again
  // STAGES items later at the earliest, each item having a stage at least,
  // so only after every consumer warp has freed the stage it read the slot
  // under, or a later one.
  constexpr bool PUBLISH = L::PUBLISH && !KC;
  auto slot = [&](int64_t j) { return reinterpret_cast<uint4*>(smem_raw + (bars - raw) + L::ITEM_OFF + 32u * static_cast<uint32_t>(j % STAGES)); };
  auto a_stage = [&](int s) { return base + (uint32_t)s * STAGE_BYTES; };
  auto b_stage = [&](int s) { return base + (uint32_t)s * STAGE_BYTES + A_BYTES; };

  // (wg from lane 0: ptxas then knows it is warp-uniform and keeps the
  // consumers' wgmma descriptors in uniform registers, with no move into
  // them before each wgmma; kernel times 1-3% shorter on the H200,
  // bench/explore/uniform-desc/.)
  const int tid = threadIdx.x, wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  const int64_t M = p.M, N = p.N, K = p.K;
  // Clusters of `cl` blocks: pairs along M (`mcl` 2: a work item is a
  // column of two tiles, rank r computing the r-th; with `share_a`, a row
  // of two), or (`p.kcl` > 1,
  // cooperative tiles up to 192 wide: the 256-wide one has no registers to
  // spare for the sum; 64-row ping-pong tiles) 2 or 4 blocks computing one
  // tile, rank r over the r-th of its K ranges, summed through distributed
  // shared memory. KC: the kernels that can (`mm_wgk*`, `mm_wgrk*`, and the
  // 64-row `mm_wgh*`, `mm_wgrh*`); the others carry none of that code.
  static_assert(!KC || (PP ? BM == MYNS_WGH_BM : BN <= 192), "K ranges in a cluster: cooperative tiles up to 192 wide, ping-pong ones of 64 rows");
  const int cl = static_cast<int>(cluster_size()), rank = cl > 1 ? static_cast<int>(cluster_rank()) : 0;
  const bool kc = KC && p.kcl > 1;
  const int mcl = kc ? 1 : cl, mrank = kc ? 0 : rank;
  // Work items are counted in 32 bits (src/gemm/sm90.rs keeps them under
  // 2^31): 64-bit divisions by these counts, a long software sequence each,
  // sit between every block's start and its first load.
  const uint32_t tiles_m = static_cast<uint32_t>((M + BM - 1) / BM), tiles_n = static_cast<uint32_t>((N + BN - 1) / BN);
  // Pairs side by side sharing A (`share_a`), else one above the other sharing B.
  const bool share_a = mcl > 1 && p.share_a != 0;
  const uint32_t groups_m = mcl > 1 && !share_a ? (tiles_m + 1) / 2 : tiles_m;
  const uint32_t groups_n = share_a ? (tiles_n + 1) / 2 : tiles_n;
  const uint32_t splits = static_cast<uint32_t>(p.splits);
  const uint32_t per_batch = groups_m * groups_n, tiles = per_batch * static_cast<uint32_t>(p.batch) * splits;
  // Persistent: cluster c takes work items c, c + clusters, ... (batch- and
  // split-major, then tile_of's L2-friendly order). The producer runs ahead
  // into the next item while the consumers store the last one. Item w covers
  // output tile (m0, n0) of batch z / splits, over k-tiles [k0, k0 + kt).
  // (cl >> 1: log2 of 1, 2, 4. The shift would serve every kernel; the
  // others keep their division, which leaves their code as it was before KC.)
  const uint32_t first = KC ? blockIdx.x >> (cl >> 1) : cl > 1 ? blockIdx.x / 2 : blockIdx.x;
  const uint32_t stride = KC ? gridDim.x >> (cl >> 1) : cl > 1 ? gridDim.x / 2 : gridDim.x;
  struct Item {
    int64_t z;  // batch * splits + split
    int m0, n0, bz, k0, kt;
  };
  // Runtime divisions are long dependent chains (on the H100 the first
  // item took 0.35 us, which every block waited for before its first load):
  // one batch and split, the common case, needs none of them but tile_of32's.
  auto item = [&](uint32_t w) {
    Item it;
    const uint32_t z = tiles == per_batch ? 0u : w / per_batch;
    uint32_t tm, tn;
    tile_of32(w - z * per_batch, groups_m, groups_n, tm, tn);
    it.z = z;
    it.m0 = static_cast<int>(share_a ? tm * BM : (tm * mcl + mrank) * BM);
    it.n0 = static_cast<int>(share_a ? (tn * mcl + mrank) * BN : tn * BN);
    const uint32_t bz = splits == 1 ? z : z / splits;
    it.bz = static_cast<int>(bz);
    const int64_t range = kc ? rank : static_cast<int64_t>(z - bz * splits);
    const int64_t k_begin = range * p.k_chunk, k_end = min(K, k_begin + p.k_chunk);
    it.k0 = static_cast<int>(k_begin);
    it.kt = KC && k_end <= k_begin ? 0 : static_cast<int>((k_end - k_begin + BK - 1) / BK);  // (a cluster's K range past K: none)
    return it;
  };

  // Warp 2 sets up the tensor maps and barriers while the two loaders
  // (threads 0 and 32, below) work out their first item (clusters: between
  // the cluster barrier's arrive and its wait), so that the first loads
  // leave sooner.
  if (tid == 64) {
    prefetch_tensormap(tmA);
    prefetch_tensormap(tmB);
    if (p.tma_store == 1) prefetch_tensormap(tmC);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 2);  // the A and the B loader (see the producer)
      mbar_init(empty(s), (PP ? 1 : CONSUMERS) * 4 * mcl);  // one arrival per consuming warp of the pair
    }
    mbar_init(turn(0), 4);
    mbar_init(turn(1), 4);
    // Consumer 0's first turn is free: turn(0)'s phase 0 completes here, so
    // that every turn is waited for alike (a wait under a branch serialized
    // the register-A ping-pong kernel's wgmmas).
    for (int w = 0; w < 4; ++w) mbar_arrive(turn(0));
    mbar_init_fence();
  }
  // (K ranges in a cluster touch no peer's barriers, and read its shared
  // memory only after the cluster barrier that follows its writes.)
  if (mcl > 1) cluster_arrive();
  Item next{};
  const bool loader = tid == 0 || tid == 32;
  if (loader) next = item(first);
  if (mcl > 1) {
    cluster_wait();  // the peer's barriers exist before anything arrives on them
  } else {
    __syncthreads();
  }
  // Nothing above touched global memory; everything below may (operands,
  // output, split-K counters), so it waits for the previous kernel.
  wait_previous_grid();

  bool kc_pending = false;  // K ranges in a cluster: a consumer's second barrier's wait is due
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    // Two loaders in two warps: thread 0 loads A (and publishes each item),
    // thread 32 loads B, each arriving on a stage's full barrier with its
    // own bytes. One thread issuing both ran about 55 dependent instructions
    // a k-tile, about 0.24 us: on the 128 x 64 tile, the whole loop's pace
    // (ncu's samples: the consumers waiting on full barriers half their
    // time, the loader never on an empty one; bench/explore/loop-stalls/).
    if (loader) {
      const bool loads_a = tid == 0;
      // setmaxnreg stays before the first loads: issued after them, it
      // completed about 1.4 us later on the H100, holding back the consumers'
      // setmaxnreg (which waits for the registers it frees).
      int it = 0;
      int64_t jp = 0;  // (the consumers' j)
      Item t = next;
      for (uint32_t w = first; w < tiles; w += stride, ++jp) {
        if (w != first) {
          // K ranges in a cluster: the next item's loads wait until every
          // rank is done with this one's partials in its stage ring.
          if (kc) kc_meet();
          t = item(w);
        }
        // The second tile of a pair past the last row (column) of tiles: no
        // A (B) of its own to load (its results are never stored); its half
        // of the shared tile still loads, for its peer.
        const bool a_in = share_a || t.m0 < M, b_in = !share_a || t.n0 < N;
        for (int kt = 0; kt < t.kt; ++kt, ++it) {
          const int s = it % STAGES, round = it / STAGES, k = t.k0 + kt * BK;
          if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
          if (PUBLISH && kt == 0 && loads_a) {
            uint4* q = slot(jp);
            q[0] = make_uint4(t.m0, t.n0, t.bz, t.kt);
            q[1] = make_uint4(static_cast<uint32_t>(t.z), 0u, 0u, 0u);
          }
          if (loads_a) {
            mbar_expect_tx(full(s), a_in ? A_BYTES : 0);
          } else {
            mbar_expect_tx(full(s), b_in ? L::B_BYTES : 0);
          }
          if (!loads_a || !a_in) {
          } else if (share_a && !A_REG) {
            // This block's half of A, into both blocks (the K-major box is
            // BM / 2 rows; M-major, the 64-row boxes alternate between the ranks).
            if constexpr (A_K) {
              tma_load_mc(a_stage(s) + rank * (A_BYTES / 2), tmA, full(s), k, t.m0 + rank * (BM / 2), t.bz, 0x3);
            } else {
#pragma unroll
              for (int box = rank; box < BM / 64; box += 2) tma_load_mc(a_stage(s) + box * BK * 128, tmA, full(s), t.m0 + box * 64, k, t.bz, 0x3);
            }
          } else if constexpr (A_REG) {
            // M-contiguous tf32 A: boxes of 32 rows (128 bytes) by BK k-lines.
#pragma unroll
            for (int j = 0; j < BM / 32; ++j) tma_load(a_stage(s) + j * BK * 128, tmA, full(s), t.m0 + 32 * j, k, t.bz);
          } else if constexpr (A_K) {
            tma_load(a_stage(s), tmA, full(s), k, t.m0, t.bz);
          } else {
            // M-contiguous: boxes of 64 rows (128 bytes) by BK k-lines.
#pragma unroll
            for (int j = 0; j < BM / 64; ++j) tma_load(a_stage(s) + j * BK * 128, tmA, full(s), t.m0 + j * 64, k, t.bz);
          }
          if (loads_a || !b_in) {
          } else if (mcl > 1 && !share_a) {
            // This block's half of B, into both blocks (the tensor map's
            // K-major box is then BN / 2 rows; N-major, the 64-wide boxes
            // alternate between the ranks: 2 and 1 of BN = 192).
            if constexpr (B_K) {
              tma_load_mc(b_stage(s) + rank * (L::B_BYTES / 2), tmB, full(s), k, t.n0 + rank * (BN / 2), t.bz, 0x3);
            } else {
#pragma unroll
              for (int box = rank; box < BN / 64; box += 2)
                tma_load_mc(b_stage(s) + box * BK * 128, tmB, full(s), t.n0 + box * 64, k, t.bz, 0x3);
            }
          } else if constexpr (B_K) {
            // (A TMA box is at most 256 rows: the 320-wide tile's B comes in two.)
            constexpr int BOXES = BN > 256 ? 2 : 1;
#pragma unroll
            for (int j = 0; j < BOXES; ++j) tma_load(b_stage(s) + j * (L::B_BYTES / BOXES), tmB, full(s), k, t.n0 + j * (BN / BOXES), t.bz);
          } else {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j) tma_load(b_stage(s) + j * BK * 128, tmB, full(s), t.n0 + j * 64, k, t.bz);
          }
        }
      }
      // Pairs: the block leaves only once every consuming warp of the pair
      // has freed the stages filled last, so that no peer's arrival on its
      // empty barriers is still to come (what the peer loads into this
      // block, its consumers have waited for). As CUTLASS's producer tail;
      // a cluster barrier at the end instead cost 0.64 us more than a
      // single block's end (bench/explore/pair-cost/).
      if (mcl > 1 && loads_a) {
        for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(empty(i % STAGES), (i / STAGES) & 1);
      }
    }
    if (kc) {
      // Every thread meets the cluster twice per work item, as the
      // consumers do (the loaders did so between their items, all but the last).
      const uint32_t n = first < tiles ? (tiles - 1 - first) / stride + 1 : 0;
#pragma unroll 1
      for (uint32_t i = loader && n > 0 ? n - 1 : 0; i < n; ++i) kc_meet();
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1, warp = (tid / 32) % 4, lane = tid % 32;
    const int g = lane / 4, t4 = lane % 4;
    // A_REG: fragment rows g and g + 8 of this warp are tile rows pr and
    // pr + 1, so one 8-byte load reads both, and the warp's loads fall on
    // distinct banks under the 128-byte swizzle (the two half-warps each
    // cover 8 of the 16-byte chunks of a line). The epilogue uses the same map.
    const int pr = (PP ? 0 : cw * 64) + (warp >> 1) * 32 + (warp & 1) * 8 + (g & 1) * 2 + (g & 2) * 8 + (g >> 2) * 4;
    const uint32_t a_off = (pr >> 5) * (BK * 128) + (pr & 3) * 4, a_chunk = (pr & 31) >> 2;
    // Descriptors of stage 0's tiles at k-step 0 (A: of each m64 half this
    // consumer computes); stage s, k-step kk is s * STAGE_UNITS + kk * KSTEP_*
    // 16-byte units on (desc_add). One wgmma k-step (k16, or k8 for tf32) is
    // 32 bytes along a K-major row, 16 lines of an MN-major (16-bit) tile; an
    // MN-major tile is stored as 64-wide blocks of BK lines (`lbo` apart).
    constexpr uint32_t KSTEP_A = (A_K ? 32 : 16 * 128) / 16, KSTEP_B = (B_K ? 32 : 16 * 128) / 16, STAGE_UNITS = STAGE_BYTES / 16;
    const uint64_t db0 = make_desc(b_stage(0), B_K ? 16 : BK * 128, 1024);
    uint64_t da0[MH];
#pragma unroll
    for (int h = 0; h < MH; ++h) {
      const int rows = PP ? h * 64 : cw * 64;  // this m64 half's first row in the tile
      da0[h] = make_desc(a_stage(0) + (A_K ? rows * 128 : (rows / 64) * BK * 128), A_K ? 16 : BK * 128, 1024);
    }
    // This thread's A fragments of k-step kk of stage s (already TF32: the
    // TMA load rounded them): (pr, k), (pr + 1, k), (pr, k + 4),
    // (pr + 1, k + 4) with k = 8 kk + t4.
    auto load_a = [&](uint32_t (&a)[4], int s, int kk) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t line = kk * 8 + h * 4 + t4;
        const float2 v = lds2(a_stage(s) + a_off + line * 128 + ((a_chunk ^ (line & 7)) << 4));
        a[2 * h] = __float_as_uint(v.x);
        a[2 * h + 1] = __float_as_uint(v.y);
      }
    };
    // A whole k-tile as one group: its fragments, then its wgmmas.
    auto mma_tile_rs = [&](float (&d)[NACC], uint32_t (&af)[BK_BYTES / 32][4], int s) {
#pragma unroll
      for (int kk = 0; kk < BK_BYTES / 32; ++kk) load_a(af[kk], s, kk);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK_BYTES / 32; ++kk) {
        if constexpr (A_REG) WgmmaRS<BN>::run(d, af[kk], desc_add(db0, s * STAGE_UNITS + kk * KSTEP_B));
      }
    };
    // A stage is free once every consuming warp of the cluster says so:
    // lane r of each warp tells block r, in one instruction.
    auto release = [&](int s) {
      if (mcl > 1) {
        if (lane < mcl) mbar_arrive_cta(empty(s), lane);
      } else if (lane == 0) {
        mbar_arrive(empty(s));
      }
    };
    // A_REG: a fragment buffer per k-step of a tile; two tiles' worth where
    // a k-tile is one group.
    uint32_t af[2][BK_BYTES / 32][4];
    int it = 0, mine = 0;
    int64_t j = 0;
    // (Items z, m0, n0, bz, kt as the producer published them; k0 is the producer's alone.)
    auto published = [&]() {
      mbar_wait(full(it % STAGES), (it / STAGES) & 1);
      const uint4 q0 = slot(j)[0], q1 = slot(j)[1];
      __syncwarp();  // every lane has read it before lane 0 frees a stage
      Item x;
      x.z = q1.x;
      x.m0 = static_cast<int>(q0.x);
      x.n0 = static_cast<int>(q0.y);
      x.bz = static_cast<int>(q0.z);
      x.k0 = 0;
      x.kt = static_cast<int>(q0.w);
      return x;
    };
    for (uint32_t w = first; w < tiles; w += stride, ++j) {
      float d[MH][NACC];
      auto zero = [&] {
#pragma unroll
        for (int h = 0; h < MH; ++h)
#pragma unroll
          for (int i = 0; i < NACC; ++i) d[h][i] = 0.f;
      };
      if constexpr (PUBLISH) {
        // Zeroed while the item's first stage is awaited, and kept there.
        zero();
        keep_acc(d);
      }
      const Item t = PUBLISH ? published() : item(w);
      // (Warp votes here and in the turn's wait: branches ptxas must take as
      // divergent serialize the register-A ping-pong kernel's wgmmas.)
      if (PP && __all_sync(0xffffffffu, (j & 1) != cw)) {
        it += t.kt;  // the other consumer's tile: skip its stages
        if (kc) {
          // Meets the cluster as that consumer does in its `kc` step below.
          if (kc_pending) cluster_wait();
          cluster_arrive();
          cluster_wait();
          cluster_arrive();
          kc_pending = true;
        }
        continue;
      }
      // Ping-pong: wait for the other consumer to finish its main loop, so
      // the two take the tensor cores in turn and every stage this one
      // waits for is at most one round ahead of its barrier's phase. (Turn
      // `mine` of consumer 0 is phase `mine` of turn(0), phase 0 being
      // free; of consumer 1, phase `mine` of turn(1).)
      if (PP) mbar_wait_warp(turn(cw), mine & 1);
      const int m0 = t.m0, n0 = t.n0;
      if constexpr (!PUBLISH) zero();
      int prev = -1;
      for (int kt = 0; kt < t.kt; ++kt, ++it) {
        const int s = it % STAGES, round = it / STAGES;
        mbar_wait(full(s), round & 1);
        if constexpr (A_REG && (BN >= RS_KSTEP_BN || PP)) {
          // Each k-step's wgmma is a group of its own, RS_PENDING of them
          // left in flight. The next k-step's fragments load before this
          // one issues, into the buffer whose reader is RS_PENDING + 1
          // groups back, so ptxas can tell that no register of an
          // in-flight wgmma is written (loaded right before its own wgmma,
          // it serialized them). The next tile's first fragments load after
          // the last k-step's wgmma issues: waiting for their stage does not
          // hold it back.
          constexpr int KS = BK_BYTES / 32;
          if (kt == 0) load_a(af[0][0], s, 0);
#pragma unroll
          for (int kk = 0; kk < KS; ++kk) {
            if (kk + 1 < KS) load_a(af[0][kk + 1], s, kk + 1);
            wgmma_fence();
            WgmmaRS<BN>::run(d[0], af[0][kk], desc_add(db0, s * STAGE_UNITS + kk * KSTEP_B));
            wgmma_commit();
            wgmma_wait_all<RS_PENDING>(d);
            keep_regs(af[0]);
            if (kk + 1 == KS && kt + 1 < t.kt) {
              const int s1 = (it + 1) % STAGES;
              mbar_wait(full(s1), ((it + 1) / STAGES) & 1);
              load_a(af[0][0], s1, 0);
            }
            // The previous tile's last group is done: its stage is free.
            if (kk == RS_PENDING - 1 && prev >= 0) release(prev);
          }
        } else {
          if constexpr (A_REG) {
            // Narrow tiles: a k-step's wgmma is too short to hide the next
            // one's loads, so a k-tile is one group, its fragments loaded
            // while the previous k-tile's group runs (constant indices keep
            // af in registers; af[kt & 1] would not).
            if (kt & 1) {
              mma_tile_rs(d[0], af[1], s);
            } else {
              mma_tile_rs(d[0], af[0], s);
            }
          } else {
            wgmma_fence();
            const uint32_t su = static_cast<uint32_t>(s) * STAGE_UNITS;
#pragma unroll
            for (int kk = 0; kk < BK_BYTES / 32; ++kk) {
              const uint64_t db = desc_add(db0, su + kk * KSTEP_B);
#pragma unroll
              for (int h = 0; h < MH; ++h) Wgmma<T, BN>::template run<!A_K, !B_K>(d[h], desc_add(da0[h], su + kk * KSTEP_A), db);
            }
          }
          wgmma_commit();
          // Keep one group in flight; the one before it is done with its stage.
          wgmma_wait_all<1>(d);
          if constexpr (A_REG) {
            keep_regs(af[0]);
            keep_regs(af[1]);
          }
          if (prev >= 0) release(prev);
        }
        prev = s;
      }
      wgmma_wait_all<0>(d);
      if constexpr (A_REG) {
        keep_regs(af[0]);
        keep_regs(af[1]);
      }
      if (prev >= 0) release(prev);
      if (PP) {
        if (lane == 0) mbar_arrive(turn(cw ^ 1));
        ++mine;
      }
      // K ranges in a cluster: every rank's consumer cw puts its partial in
      // its stage ring (free: both consumers are past their last wgmma, and
      // the producer loads the next item only after the second cluster
      // barrier), float4 i of thread l at 16 (128 i + l); after the first,
      // rank cw % cl sums them all, in rank (K) order whichever rank it is,
      // and stores the half (ping-pong: the tile, the other consumer meeting
      // the cluster's barriers without a partial; so the items run one after
      // another, the store overlapping the next item's loads).
      static_assert(2 * NACC * 512 <= STAGES * STAGE_BYTES, "both partials fit in the stage ring");
      if (kc) {
        if (kc_pending) cluster_wait();  // every rank has read the last item's partials
        // Every warp of the tile is past its last wgmma.
        if (PP) {
          bar_sync(1 + cw, 128);
        } else {
          bar_sync(3, 256);
        }
        const uint32_t part = base + cw * (NACC * 512) + 16 * (tid % 128);
        constexpr int V = NACC / 4, G = sum_group(V);
#pragma unroll
        for (int i = 0; i < V; ++i) sts128f(part + 2048 * i, d[0][4 * i], d[0][4 * i + 1], d[0][4 * i + 2], d[0][4 * i + 3]);
        fence_async_smem();  // before the next item's TMA loads overwrite them
        cluster_arrive();
        cluster_wait();
        // (A vote: see the split-K step's.)
        const bool owner = __all_sync(0xffffffffu, cw % cl == rank);
        if (owner) {
          // G float4s of one rank at a time, all in flight before the adds
          // (each a round trip to another SM), added in rank order.
#pragma unroll
          for (int i0 = 0; i0 < V; i0 += G)
#pragma unroll 1
            for (int q = 0; q < cl; ++q) {
              float4 v[G];
#pragma unroll
              for (int i = 0; i < G; ++i) v[i] = ld_cluster4(part + 2048 * (i0 + i), q);
#pragma unroll
              for (int i = 0; i < G; ++i) {
                float* a = &d[0][4 * (i0 + i)];
                a[0] = q ? a[0] + v[i].x : v[i].x;
                a[1] = q ? a[1] + v[i].y : v[i].y;
                a[2] = q ? a[2] + v[i].z : v[i].z;
                a[3] = q ? a[3] + v[i].w : v[i].w;
              }
            }
        }
        // Done with the peers' partials; this consumer waits for theirs to
        // be read before it writes the next item's, or leaves.
        cluster_arrive();
        kc_pending = true;
        if (!owner) continue;
      }
      // Split-K: the blocks of a tile's K ranges each write their float32
      // partial (this consumer's accumulators, float4 i of thread l at
      // 4 (128 i + l): the same registers in every block, so no bounds or
      // layout to mind), then count themselves in (each thread's fence, then
      // the barrier, orders its stores before the count); the last to
      // arrive sums every range's partial (L2-resident, its own included) in
      // K order, so that the sum does not depend on which block that is,
      // and stores the tile as an unsplit one is stored. No second kernel,
      // no partials in DRAM.
      if (p.splits > 1) {
        if (m0 >= M || n0 >= N) continue;  // a pair's second tile past the last row or column: nothing to store
        const uint32_t split = static_cast<uint32_t>(t.z) - static_cast<uint32_t>(t.bz) * splits;
        const int64_t tile = (static_cast<int64_t>(t.bz) * tiles_m + m0 / BM) * tiles_n + n0 / BN;
        constexpr int UNIT = BM * BN, V = NACC / 4;  // floats per split of a tile; float4s per m64 half
        float* const part = p.ws + tile * splits * UNIT + (PP ? 0 : cw * (UNIT / 2)) + 4 * (tid % 128);
        auto at = [&](uint32_t j, int i) { return reinterpret_cast<float4*>(part + static_cast<int64_t>(j) * UNIT + 512 * i); };
#pragma unroll
        for (int h = 0; h < MH; ++h)
#pragma unroll
          for (int i = 0; i < V; ++i) *at(split, h * V + i) = make_float4(d[h][4 * i], d[h][4 * i + 1], d[h][4 * i + 2], d[h][4 * i + 3]);
        __threadfence();
        bar_sync(1 + cw, 128);
        if (tid % 128 == 0) *last_of(cw) = atomicAdd(p.flags + 2 * tile + (PP ? 0 : cw), 1) == static_cast<int>(splits) - 1;
        bar_sync(1 + cw, 128);
        // A warp vote, so that the compiler sees a uniform branch: one it
        // must take as divergent serializes the register-A kernels' wgmmas.
        if (!__all_sync(0xffffffffu, *last_of(cw) != 0)) continue;
        __threadfence();
        // The partials in K order (this block's own too, from L2), G
        // float4s at a time: loads in flight hide L2's latency, and more of
        // them at once would not fit in registers beside the accumulators.
        constexpr int G = sum_group(V);
#pragma unroll
        for (int h = 0; h < MH; ++h)
#pragma unroll
          for (int i0 = 0; i0 < V; i0 += G)
            for (uint32_t j = 0; j < splits; ++j) {
              float4 v[G];
#pragma unroll
              for (int i = 0; i < G; ++i) v[i] = __ldcg(at(j, h * V + i0 + i));
#pragma unroll
              for (int i = 0; i < G; ++i) {
                float* a = &d[h][4 * (i0 + i)];
                a[0] = j ? a[0] + v[i].x : v[i].x;
                a[1] = j ? a[1] + v[i].y : v[i].y;
                a[2] = j ? a[2] + v[i].z : v[i].z;
                a[3] = j ? a[3] + v[i].w : v[i].w;
              }
            }
      }

      // Accumulator layout (per warp: 16 rows): d[4j + {0,1}] row g, cols 8j + 2t + {0,1};
      // d[4j + {2,3}] row g + 8 (A_REG: rows pr and pr + 1).
      if constexpr (L::STAGED && !A_REG) {
        if (p.tma_store) {
          const uint32_t cbuf = c_base + cw * L::C_HALF;  // 1024-aligned (C_HALF is a multiple of 1024)
          const bool leader = tid % 128 == 0;
          if (p.tma_store == 1) {
            // This consumer's 64 x BN half in rounds of TMA_COLS columns,
            // each as boxes of 64 rows by C_BOX columns (64: 128-byte
            // swizzle, 16-byte chunk c of row r at c ^ (r % 8); 16: rows of
            // 32 bytes as they are), four 8 x 8 matrices per 16 columns; TMA
            // leaves out what lies past the edges.
            const int mi = lane / 8, row = warp * 16 + (mi & 1) * 8 + lane % 8;
#pragma unroll
            for (int c0 = 0; c0 < BN; c0 += L::TMA_COLS) {
              // The last round's (or tile's) copies are done reading the buffer.
              if (leader) tma_store_wait_read();
              bar_sync(1 + cw, 128);
#pragma unroll
              for (int jj = 0; jj < L::TMA_COLS / 16; ++jj) {
                const int col = jj * 16 + (mi >> 1) * 8;
                const uint32_t addr = L::C_BOX == 64 ? cbuf + (col / 64) * 8192 + row * 128 + ((((col % 64) / 8) ^ (row & 7)) << 4)
                                                     : cbuf + (col / 16) * 2048 + row * 32 + ((col % 16) / 8) * 16;
                const float* v = &d[0][c0 / 2 + 8 * jj];
                stmatrix4(addr, pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3]), pack2<T>(v[4], v[5]), pack2<T>(v[6], v[7]));
              }
              fence_async_smem();
              bar_sync(1 + cw, 128);
              if (leader) {
#pragma unroll
                for (int b = 0; b < L::TMA_COLS / L::C_BOX; ++b) {
                  if (p.beta) {
                    tma_store_add(tmC, cbuf + b * L::C_BOX_BYTES, n0 + c0 + L::C_BOX * b, m0 + cw * 64, t.bz);
                  } else {
                    tma_store(tmC, cbuf + b * L::C_BOX_BYTES, n0 + c0 + L::C_BOX * b, m0 + cw * 64, t.bz);
                  }
                }
                tma_store_commit();
              }
            }
            continue;
          }
          // Rows TMA cannot address (pitch or start off 16 bytes), in rounds
          // of BULK_COLS columns: row r of the round goes to cbuf + r C_PITCH
          // + s, s being its global start's offset from a 16-byte boundary
          // (the same in every round: they start 2 BULK_COLS bytes apart),
          // so that its aligned middle copies out in 16-byte vectors, shared
          // and global addresses alike; the few elements before and after it
          // (under 8 each) go one at a time. The warps copy it out: each lane
          // one vector or end element, RPI rows a step. (On the H200, N =
          // 4095's kernel took 17.0 us over its aligned neighbour's with a
          // bulk copy per row, 13.3 with these, about 9 with the epilogue's
          // instructions cut: bench/explore/unaligned-out/, tma-rows/.)
          T* c = static_cast<T*>(p.c) + (int64_t)t.bz * p.scb;
          const int64_t r0 = m0 + cw * 64;
          auto offset = [&](int row) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(c + (r0 + row) * p.scm + n0) % 16); };
          const int ra = warp * 16 + g, rb = ra + 8;
          const uint32_t sa = offset(ra), sb = offset(rb);
          const uint32_t pa = cbuf + ra * L::C_PITCH + sa + 4 * t4, pb = cbuf + rb * L::C_PITCH + sb + 4 * t4;
          // Copy-out: lane l takes chunk l % CPR of row l / CPR of the step.
          constexpr int CPR = L::BULK_COLS / 8, RPI = CPR >= 32 ? 1 : 32 / CPR;
          static_assert(CPR <= 32, "a row's vectors fit in a warp");
          const int lr = lane / CPR, ch = lane % CPR;
#pragma unroll
          for (int c0 = 0; c0 < BN; c0 += L::BULK_COLS) {
            // A warp stages and copies out its own 16 rows: its lanes are
            // done reading the last round's (or tile's).
            __syncwarp();
#pragma unroll
            for (int jl = 0; jl < L::BULK_COLS / 8; ++jl) {
              const int j = c0 / 8 + jl;
              const uint32_t va = pack2<T>(d[0][4 * j], d[0][4 * j + 1]), vb = pack2<T>(d[0][4 * j + 2], d[0][4 * j + 3]);
              // Two 16-bit stores each, whatever the row's offset: a warp's
              // rows have both kinds, and a branch on it ran both sides.
              sts16(pa + 16 * jl, static_cast<uint16_t>(va));
              sts16(pa + 16 * jl + 2, static_cast<uint16_t>(va >> 16));
              sts16(pb + 16 * jl, static_cast<uint16_t>(vb));
              sts16(pb + 16 * jl + 2, static_cast<uint16_t>(vb >> 16));
            }
            __syncwarp();
            const int64_t left = N - n0 - c0;
            const int cols = static_cast<int>(left < L::BULK_COLS ? left : L::BULK_COLS);
            if (cols <= 0 || lr >= RPI) continue;
            // (Row pointers stepped, not recomputed: the 64-bit products
            // were a good part of this epilogue's instructions.)
            T* dst = c + (r0 + warp * 16 + lr) * p.scm + n0 + c0;
            const int64_t step = RPI * p.scm;
            for (int r = warp * 16 + lr; r < warp * 16 + 16; r += RPI, dst += step) {
              if (r0 + r >= M) break;
              // (dst's offset is the row's: n0 + c0 is a whole number of 16 bytes.)
              const uint32_t s = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(dst) % 16), src = cbuf + r * L::C_PITCH + s;
              const int head = min(cols, static_cast<int>((16 - s) % 16) / 2), body = (cols - head) / 8 * 8;
              if (ch < body / 8) stg128(dst + head + 8 * ch, lds128(src + 2 * head + 16 * ch));
              const int tail = cols - head - body;
              // Up to 7 elements each: one per lane where a row has 8 lanes or
              // more, else (rounds under 64 columns) a few.
              if constexpr (CPR >= 8) {
                if (ch < head) dst[ch] = lds_elem<T>(src + 2 * ch);
                if (ch < tail) dst[head + body + ch] = lds_elem<T>(src + 2 * (head + body + ch));
              } else {
                for (int e = ch; e < head; e += CPR) dst[e] = lds_elem<T>(src + 2 * e);
                for (int e = ch; e < tail; e += CPR) dst[head + body + e] = lds_elem<T>(src + 2 * (head + body + e));
              }
            }
          }
          continue;
        }
      }
      if constexpr (A_REG) {
        // Stores pair rows pr and pr + 1 (adjacent along the output's unit
        // stride when it is c^T of a row-major c).
        const int64_t r = m0 + pr;
        T* c = static_cast<T*>(p.c) + (int64_t)t.bz * p.scb;
        const bool paired = p.scm == 1 && p.scn % 2 == 0 && p.scb % 2 == 0;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int64_t n = n0 + 8 * j + 2 * t4;
          store2<T>(c, n, r, d[0][4 * j], d[0][4 * j + 2], N, M, p.scn, p.scm, paired, p.beta != 0);
          store2<T>(c, n + 1, r, d[0][4 * j + 1], d[0][4 * j + 3], N, M, p.scn, p.scm, paired, p.beta != 0);
        }
        continue;
      }
#pragma unroll
      for (int h = 0; h < MH; ++h) {
        const int64_t r = m0 + (PP ? h * 64 : cw * 64) + warp * 16 + g;
        T* c = static_cast<T*>(p.c) + (int64_t)t.bz * p.scb;
        if (p.scn == 1 && p.scm % 2 == 0 && p.scb % 2 == 0 && n0 + BN <= N) {
          // Interior columns, unit stride: paired stores, row checks only.
          using P = typename Pair<T>::type;
          P* row0 = reinterpret_cast<P*>(c + r * p.scm + n0 + 2 * t4);
          P* row1 = reinterpret_cast<P*>(c + (r + 8) * p.scm + n0 + 2 * t4);
          const bool ok0 = r < M, ok1 = r + 8 < M;
          if (p.beta) {
            // c += a @ b: each old pair read and added before the one
            // rounding. The old pairs of a group of columns are all loaded
            // before any store: interleaved, each load waited behind the
            // store before it (the compiler cannot tell they never overlap),
            // which doubled the time of FLCE's weight-gradient products.
            // (A group size that divides BN / 8: 8 of 24 for BN = 192, 6 of
            // 18 for BN = 144.)
            constexpr int G0 = BN / 8 < 64 / (int)sizeof(P) ? BN / 8 : 64 / (int)sizeof(P);
            constexpr int G = (BN / 8) % G0 == 0 ? G0 : sum_group(BN / 8);
            static_assert((BN / 8) % G == 0, "whole groups of columns");
#pragma unroll
            for (int j0 = 0; j0 < BN / 8; j0 += G) {
              P old0[G], old1[G];
#pragma unroll
              for (int j = 0; j < G; ++j) {
                if (ok0) old0[j] = row0[4 * (j0 + j)];
                if (ok1) old1[j] = row1[4 * (j0 + j)];
              }
#pragma unroll
              for (int j = 0; j < G; ++j) {
                const int jj = j0 + j;
                if (ok0) {
                  const T* o = reinterpret_cast<const T*>(&old0[j]);
                  row0[4 * jj] = Pair<T>::make(d[h][4 * jj] + to_acc(o[0]), d[h][4 * jj + 1] + to_acc(o[1]));
                }
                if (ok1) {
                  const T* o = reinterpret_cast<const T*>(&old1[j]);
                  row1[4 * jj] = Pair<T>::make(d[h][4 * jj + 2] + to_acc(o[0]), d[h][4 * jj + 3] + to_acc(o[1]));
                }
              }
            }
          } else {
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
              if (ok0) row0[4 * j] = Pair<T>::make(d[h][4 * j], d[h][4 * j + 1]);
              if (ok1) row1[4 * j] = Pair<T>::make(d[h][4 * j + 2], d[h][4 * j + 3]);
            }
          }
        } else {
          // Right edge, odd pitch or strided output: walking one pointer per
          // row; pairs where both columns are in range and the row's pair is
          // 4-byte aligned (an odd pitch: every other row), else elements.
          const int64_t scn = p.scn;
          T* q0 = c + r * p.scm + (n0 + 2 * t4) * scn;
          T* q1 = q0 + 8 * p.scm;
          const bool ok0 = r < M, ok1 = r + 8 < M;
          const bool pair0 = scn == 1 && reinterpret_cast<uintptr_t>(q0) % (2 * sizeof(T)) == 0;
          const bool pair1 = scn == 1 && reinterpret_cast<uintptr_t>(q1) % (2 * sizeof(T)) == 0;
          using P = typename Pair<T>::type;
          const bool add = p.beta != 0;
          int nn = n0 + 2 * t4;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j, nn += 8, q0 += 8 * scn, q1 += 8 * scn) {
            float v0 = d[h][4 * j], v1 = d[h][4 * j + 1], v2 = d[h][4 * j + 2], v3 = d[h][4 * j + 3];
            if (add) {
              if (ok0 && nn < N) v0 += to_acc(q0[0]);
              if (ok0 && nn + 1 < N) v1 += to_acc(q0[scn]);
              if (ok1 && nn < N) v2 += to_acc(q1[0]);
              if (ok1 && nn + 1 < N) v3 += to_acc(q1[scn]);
            }
            if (ok0 && pair0 && nn + 1 < N) {
              *reinterpret_cast<P*>(q0) = Pair<T>::make(v0, v1);
            } else {
              if (ok0 && nn < N) q0[0] = from_acc<T>(v0);
              if (ok0 && nn + 1 < N) q0[scn] = from_acc<T>(v1);
            }
            if (ok1 && pair1 && nn + 1 < N) {
              *reinterpret_cast<P*>(q1) = Pair<T>::make(v2, v3);
            } else {
              if (ok1 && nn < N) q1[0] = from_acc<T>(v2);
              if (ok1 && nn + 1 < N) q1[scn] = from_acc<T>(v3);
            }
          }
        }
      }
    }
  }
  // K ranges in a cluster: the consumers' last wait (the producer's came
  // with its last meeting), after which no rank reads this block's shared
  // memory.
  if (kc_pending) cluster_wait();
  // The output's last TMA stores have read their shared memory before the
  // block leaves (their writes complete with the grid, as CUTLASS's
  // epilogues rely on).
  if (!PP && !A_REG && wg > 0 && p.tma_store == 1 && tid % 128 == 0) tma_store_wait_read();
  // (Pairs: the A loader's wait on the last stages keeps the block until
  // its peer is done arriving on its barriers; see the producer.)
}

}  // namespace sm90
}  // namespace myns

using myns::GemmParams;

#define MYNS_WG_ONE(name, T, AK, BKC, BN, PP, AREG, BM, KC)                                             \
  extern "C" __global__ void __launch_bounds__(myns::sm90::THREADS, 1)                                  \
      name(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,                \
           const __grid_constant__ CUtensorMap tmC, const GemmParams p) {                                  \
    myns::sm90::wg_gemm<T, AK, BKC, BN, PP, AREG, BM, KC>(&tmA, &tmB, &tmC, p);                        \
  }
#define MYNS_WG_LAYOUTS(kind, PP, BN, dt, T, BM, KC)                            \
  MYNS_WG_ONE(mm_##kind##BN##_##dt##_kk, T, true, true, BN, PP, false, BM, KC)   \
  MYNS_WG_ONE(mm_##kind##BN##_##dt##_kn, T, true, false, BN, PP, false, BM, KC)  \
  MYNS_WG_ONE(mm_##kind##BN##_##dt##_mk, T, false, true, BN, PP, false, BM, KC)  \
  MYNS_WG_ONE(mm_##kind##BN##_##dt##_mn, T, false, false, BN, PP, false, BM, KC)
// The tiles: src/gemm/tiles.rs (WG cooperative, WGP ping-pong, WGH
// ping-pong on 64 rows, WGK cooperative with K ranges in a cluster),
// through gemm_tiles.h.
#define MYNS_WG_COOP(BN, STAGES)                                                        \
  MYNS_WG_LAYOUTS(wg, false, BN, bf16, __nv_bfloat16, MYNS_WG_BM, false)                \
  MYNS_WG_LAYOUTS(wg, false, BN, f16, __half, MYNS_WG_BM, false)                        \
  MYNS_WG_ONE(mm_wg##BN##_tf32_kk, float, true, true, BN, false, false, MYNS_WG_BM, false) \
  MYNS_WG_ONE(mm_wgr##BN##_tf32, float, false, true, BN, false, true, MYNS_WG_BM, false)
#define MYNS_WG_PINGPONG(BN, STAGES)                                     \
  MYNS_WG_LAYOUTS(wgp, true, BN, bf16, __nv_bfloat16, MYNS_WG_BM, false) \
  MYNS_WG_LAYOUTS(wgp, true, BN, f16, __half, MYNS_WG_BM, false)
#define MYNS_WG_HALF(BN, STAGES)                                         \
  MYNS_WG_LAYOUTS(wgh, true, BN, bf16, __nv_bfloat16, MYNS_WGH_BM, true) \
  MYNS_WG_LAYOUTS(wgh, true, BN, f16, __half, MYNS_WGH_BM, true)         \
  MYNS_WG_ONE(mm_wgrh##BN##_tf32, float, false, true, BN, true, true, MYNS_WGH_BM, true)
#define MYNS_WG_KCLUSTER(BN, STAGES)                                                    \
  MYNS_WG_LAYOUTS(wgk, false, BN, bf16, __nv_bfloat16, MYNS_WG_BM, true)                \
  MYNS_WG_LAYOUTS(wgk, false, BN, f16, __half, MYNS_WG_BM, true)                        \
  MYNS_WG_ONE(mm_wgk##BN##_tf32_kk, float, true, true, BN, false, false, MYNS_WG_BM, true) \
  MYNS_WG_ONE(mm_wgrk##BN##_tf32, float, false, true, BN, false, true, MYNS_WG_BM, true)
// The 64-row tile whose width makes one wave of columns where 128 would
// make a few more tiles than SMs (WGW: 144 = 18944 / 132 rounded up):
// 16-bit, B K-major only.
#define MYNS_WG_WAVE(BN, STAGES)                                                                 \
  MYNS_WG_ONE(mm_wgh##BN##_bf16_kk, __nv_bfloat16, true, true, BN, true, false, MYNS_WGH_BM, true) \
  MYNS_WG_ONE(mm_wgh##BN##_bf16_mk, __nv_bfloat16, false, true, BN, true, false, MYNS_WGH_BM, true) \
  MYNS_WG_ONE(mm_wgh##BN##_f16_kk, __half, true, true, BN, true, false, MYNS_WGH_BM, true)          \
  MYNS_WG_ONE(mm_wgh##BN##_f16_mk, __half, false, true, BN, true, false, MYNS_WGH_BM, true)
// The 128 x 320 tile (WGX): 16-bit only.
#define MYNS_WG_COOP16(BN, STAGES)                                       \
  MYNS_WG_LAYOUTS(wg, false, BN, bf16, __nv_bfloat16, MYNS_WG_BM, false) \
  MYNS_WG_LAYOUTS(wg, false, BN, f16, __half, MYNS_WG_BM, false)
// The cooperative widths of one wave (WGQ): 16-bit, B K-major only.
#define MYNS_WG_QUANT(BN, STAGES)                                                                 \
  MYNS_WG_ONE(mm_wg##BN##_bf16_kk, __nv_bfloat16, true, true, BN, false, false, MYNS_WG_BM, false) \
  MYNS_WG_ONE(mm_wg##BN##_bf16_mk, __nv_bfloat16, false, true, BN, false, false, MYNS_WG_BM, false) \
  MYNS_WG_ONE(mm_wg##BN##_f16_kk, __half, true, true, BN, false, false, MYNS_WG_BM, false)          \
  MYNS_WG_ONE(mm_wg##BN##_f16_mk, __half, false, true, BN, false, false, MYNS_WG_BM, false)
MYNS_WG_TILES(MYNS_WG_COOP)
MYNS_WGX_TILES(MYNS_WG_COOP16)
MYNS_WGQ_TILES(MYNS_WG_QUANT)
MYNS_WGP_TILES(MYNS_WG_PINGPONG)
MYNS_WGH_TILES(MYNS_WG_HALF)
MYNS_WGW_TILES(MYNS_WG_WAVE)
MYNS_WGK_TILES(MYNS_WG_KCLUSTER)
