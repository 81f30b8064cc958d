// Runs the real kernels/matmul_sm90a.cu code (wgmma + TMA + mbarriers) on the CPU
// under the fiber emulation (see run.sh), for both B layouts and both half types (and tf32, K-major B),
// K ranges summed across the blocks of a cluster (p.kcl), with deadlock
// detection; host set-up mirrors src/gemm/sm90.rs.
#include "emu_prelude.h"
#include <cuda.h>
#include <type_traits>
namespace myns {
// The kernel's extern __shared__ (run.sh points smem_raw at emu_window()):
// a window per block of a cluster (slot), so that each has its own shared
// memory at the same addresses, as on the GPU.
constexpr uint32_t EMU_SMEM = 240 * 1024, EMU_RANKS = 4;
alignas(1024) unsigned char emu_smem[EMU_RANKS][EMU_SMEM];
inline unsigned char* emu_window() { return emu_smem[emu::cur->slot]; }
}  // namespace myns
#include "matmul_sm90a.cu"
#include <random>
#include <string>

// Blocks run one at a time, or a cluster at a time (p.kcl > 1: kcl blocks
// over K ranges; pairs sharing B or, p.share_a, A), storing from registers
// (tma_store 0), or through shared memory with TMA (1: the map `c`) or
// copied out by warps (2): TMA's reduce-add stores are not emulated
// (emu_wg.h).
using WgKern = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const GemmParams);
static WgKern g_k; static CUtensorMap g_a, g_b, g_c; static GemmParams g_p;
static void fiber_main() { g_k(g_a, g_b, g_c, g_p); myns::sm90::emu_thread_exit(); emu::cur->done = true; }

// gx blocks along x in clusters of `cl` (the kernel's cluster dims).
static void launch(WgKern k, unsigned gx, unsigned gz, const CUtensorMap& a, const CUtensorMap& b, const GemmParams& p, unsigned cl = 1,
                   const CUtensorMap* c = nullptr) {
  const int threads = 384;
  if (cl < 1 || cl > myns::EMU_RANKS || gx % cl) { fprintf(stderr, "grid %u in clusters of %u\n", gx, cl); abort(); }
  emu::grid_dim = {gx, 1, gz}; emu::block_dim = {(unsigned)threads, 1, 1}; emu::nthreads = threads;
  g_k = k; g_a = a; g_b = b; g_p = p;
  g_c = c ? *c : a;  // (else not read)
  // Stacks kept across launches, not zeroed (their pages are touched only
  // as used), never freed (a fiber may exit the program on one).
  static std::vector<char*>& stacks = *new std::vector<char*>;
  const size_t stack_bytes = 512 * 1024, n = (size_t)threads * cl;
  while (stacks.size() < n) stacks.push_back(new char[stack_bytes]);
  std::vector<emu::Fiber> fibers(n);
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned x0 = 0; x0 < gx; x0 += cl) {
      emu::block_idx = {x0, 0, z};
      memset(myns::emu_smem, 0xFF, sizeof myns::emu_smem[0] * cl);
      emu::bar_count = 0; memset(emu::bar_counts, 0, sizeof emu::bar_counts);
      for (auto& row : myns::emu_bars) for (auto& b : row) b = {};
      myns::sm90::emu_cluster_begin(cl);
      for (size_t i = 0; i < n; ++i) {
        auto& f = fibers[i];
        f.done = false; f.tid = {(unsigned)(i % threads), 0, 0}; f.slot = (int)(i / threads); f.bid = {x0 + f.slot, 0, z};
        getcontext(&f.ctx); f.ctx.uc_stack.ss_sp = stacks[i]; f.ctx.uc_stack.ss_size = stack_bytes; f.ctx.uc_link = &emu::sched;
        makecontext(&f.ctx, fiber_main, 0);
      }
      bool all = false; long idle = 0, last = -1;
      // Each round starts at the next block of the cluster, so that no block
      // is always the first (or last) to reach a point.
      for (size_t round = 0; !all; ++round) {
        all = true;
        for (size_t i = 0; i < n; ++i) {
          auto& f = fibers[(i + round % cl * threads) % n];
          if (f.done) continue;
          all = false; emu::cur = &f; swapcontext(&emu::sched, &f.ctx);
        }
        if (myns::emu_progress == last) { if (++idle > 2000) { fprintf(stderr, "DEADLOCK in block %u,%u (cluster of %u)\n", x0, z, cl); exit(3); } } else { idle = 0; last = myns::emu_progress; }
      }
      // Every wgmma group is waited for before the block ends.
      for (auto& [f, q] : myns::sm90::emu_wg_queues)
        if (!q.open.empty() || !q.groups.empty()) { fprintf(stderr, "FAIL: block %u,%u ended with wgmma groups not waited for\n", f->bid.x, z); exit(5); }
      myns::sm90::emu_wg_queues.clear();
    }
}

template <class T> float tof(T x);
template <> float tof(__half x) { return __half2float(x); }
template <> float tof(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> float tof(float x) { return x; }
template <class T> T fromf(float x);
template <> __half fromf(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 fromf(float x) { return __float2bfloat16_rn(x); }
template <> float fromf(float x) { return x; }
static int fails = 0, cases = 0;

// K ranges as the `kcl` blocks of a cluster, as src/gemm/sm90.rs launch sets
// them (plan.rs split_k's chunk of whole k-tiles of `kt`; ranks past K's
// last range get none); no workspace.
static void set_kcl(GemmParams& p, int kcl, int kt) {
  p.kcl = kcl;
  if (kcl == 1) return;
  const int64_t r = std::min<int64_t>(kcl, std::max<int64_t>(p.K, 1)), chunk = std::max<int64_t>(((p.K + r - 1) / r + kt - 1) / kt * kt, kt);
  p.splits = 1; p.k_chunk = chunk;
}
static std::string grid_note(unsigned blocks, const GemmParams& p) {
  if (p.kcl < 2) return "blocks " + std::to_string(blocks);
  return "clusters " + std::to_string(blocks) + " of " + std::to_string(p.kcl) + " (K ranges of " + std::to_string(p.k_chunk) + ")";
}

// The kernels by schedule, tile width and layout (kk, kn, mk, mn), as
// src/gemm/tiles.rs lists them.
#define WG_LAY(kind, BN, dt) {mm_##kind##BN##_##dt##_kk, mm_##kind##BN##_##dt##_kn, mm_##kind##BN##_##dt##_mk, mm_##kind##BN##_##dt##_mn}
static const WgKern coop[2][4][4] = {{WG_LAY(wg, 256, bf16), WG_LAY(wg, 192, bf16), WG_LAY(wg, 128, bf16), WG_LAY(wg, 64, bf16)},
                                     {WG_LAY(wg, 256, f16), WG_LAY(wg, 192, f16), WG_LAY(wg, 128, f16), WG_LAY(wg, 64, f16)}};
static const WgKern pingpong[2][2][4] = {{WG_LAY(wgp, 128, bf16), WG_LAY(wgp, 64, bf16)}, {WG_LAY(wgp, 128, f16), WG_LAY(wgp, 64, f16)}};
static const WgKern half_rows[2][2][4] = {{WG_LAY(wgh, 128, bf16), WG_LAY(wgh, 64, bf16)}, {WG_LAY(wgh, 128, f16), WG_LAY(wgh, 64, f16)}};
// The 320-wide cooperative tile (two wgmmas a k-step): 16-bit only.
static const WgKern wide_coop[2][4] = {WG_LAY(wg, 320, bf16), WG_LAY(wg, 320, f16)};
// The 144-wide 64-row tile: B K-major only (kk, mk).
static const WgKern wide_rows[2][2] = {{mm_wgh144_bf16_kk, mm_wgh144_bf16_mk}, {mm_wgh144_f16_kk, mm_wgh144_f16_mk}};
// The cooperative widths of one wave (96 to 176): 16-bit, B K-major only (kk, mk).
#define WG_QK(BN, dt) {mm_wg##BN##_##dt##_kk, mm_wg##BN##_##dt##_mk}
static const WgKern quant[2][5][2] = {{WG_QK(96, bf16), WG_QK(112, bf16), WG_QK(144, bf16), WG_QK(160, bf16), WG_QK(176, bf16)},
                                      {WG_QK(96, f16), WG_QK(112, f16), WG_QK(144, f16), WG_QK(160, f16), WG_QK(176, f16)}};
static int quant_index(int bn) { return bn == 96 ? 0 : bn == 112 ? 1 : bn == 144 ? 2 : bn == 160 ? 3 : bn == 176 ? 4 : -1; }
// Schedules: cooperative, ping-pong, ping-pong on 64-row tiles (wgh).
enum { COOP = 0, PP = 1, PPH = 2 };
static const WgKern tf32_kk[4] = {mm_wg256_tf32_kk, mm_wg192_tf32_kk, mm_wg128_tf32_kk, mm_wg64_tf32_kk};
// The cooperative kernels that sum K ranges in a cluster (widths 192, 128, 64).
static const WgKern kcoop[2][3][4] = {{WG_LAY(wgk, 192, bf16), WG_LAY(wgk, 128, bf16), WG_LAY(wgk, 64, bf16)},
                                      {WG_LAY(wgk, 192, f16), WG_LAY(wgk, 128, f16), WG_LAY(wgk, 64, f16)}};
static const WgKern ktf32_kk[3] = {mm_wgk192_tf32_kk, mm_wgk128_tf32_kk, mm_wgk64_tf32_kk};
static int width_index(int bn) { return bn == 256 ? 0 : bn == 192 ? 1 : bn == 128 ? 2 : 3; }
template <class T> WgKern pick(int bn, int pp, bool a_k, bool b_k, bool kc = false) {
  if (quant_index(bn) >= 0 && pp == COOP) {
    if (!b_k || kc || std::is_same<T, float>::value) { fprintf(stderr, "no %d-wide cooperative kernel for this case\n", bn); abort(); }
    return quant[std::is_same<T, __half>::value][quant_index(bn)][a_k ? 0 : 1];
  }
  if (bn == 144) {
    if (pp != PPH || !b_k || kc || std::is_same<T, float>::value) { fprintf(stderr, "no 144-wide kernel for this case\n"); abort(); }
    return wide_rows[std::is_same<T, __half>::value][a_k ? 0 : 1];
  }
  if (bn == 320) {
    if (pp != COOP || kc || std::is_same<T, float>::value) { fprintf(stderr, "no 320-wide kernel for this case\n"); abort(); }
    return wide_coop[std::is_same<T, __half>::value][(!a_k) * 2 + !b_k];
  }
  const int w = width_index(bn);
  if (kc && (pp || w == 0)) { fprintf(stderr, "no K-range cluster kernel for this tile\n"); abort(); }
  if (std::is_same<T, float>::value) return kc ? ktf32_kk[w - 1] : tf32_kk[w];
  const int dt = std::is_same<T, __half>::value, lay = (!a_k) * 2 + !b_k;
  if (kc) return kcoop[dt][w - 1][lay];
  return pp == PPH ? half_rows[dt][w - 2][lay] : pp ? pingpong[dt][w - 2][lay] : coop[dt][w][lay];
}

// One product on the Hopper kernel as src/gemm/sm90.rs runs it: a K- or
// M-contiguous, b K- or N-contiguous (rows padded to 16 bytes), `blocks`
// persistent blocks, split-K partials summed by the kernel's last block of each tile.
// store (src/gemm/sm90.rs's tma_store), the output at `c_off` elements
// past a 16-byte boundary: 1, staged in shared memory and stored by TMA
// (N and c_off multiples of 8); 2, staged and copied out by the warps
// (rows TMA cannot address). pp: COOP (or
// false), PP (or true), PPH. kcl 2 or 4: K ranges as the blocks of a
// cluster (cooperative tiles up to 192 wide), `blocks` clusters. pairs:
// clusters of two blocks whose tiles share B (PAIR_B: one above the
// other) or A (PAIR_A: side by side), `blocks` pairs.
enum { NO_PAIR, PAIR_B, PAIR_A };
template <class T>
void run_case(int bn, int pp, bool a_k, bool b_k, int batch, int M, int K, int N, double u_out, double u_in = 0, int splits = 1, unsigned blocks = 2,
              int store = 0, int c_off = 0, int kcl = 1, int pairs = NO_PAIR) {
  const WgKern kern = pick<T>(bn, pp, a_k, b_k, kcl > 1);
  const int bm = pp == PPH ? 64 : 128;
  std::mt19937 rng(M * 7 + K * 13 + N + batch); std::normal_distribution<float> nd;
  auto rup = [](int x) { return (x + 7) / 8 * 8; };
  int64_t sak, sam, sab, sbk, sbn, sbb;
  if (a_k) { sak = 1; sam = rup(K); sab = (int64_t)M * sam; } else { sam = 1; sak = rup(M); sab = (int64_t)K * sak; }
  if (b_k) { sbk = 1; sbn = rup(K); sbb = (int64_t)N * sbn; } else { sbn = 1; sbk = rup(N); sbb = (int64_t)K * sbk; }
  std::vector<T> A(batch * sab + 8), B(batch * sbb + 8), C0((size_t)batch * M * N + 8, fromf<T>(NAN));
  T* C = C0.data() + c_off;
  for (auto& x : A) x = fromf<T>(nd(rng)); for (auto& x : B) x = fromf<T>(nd(rng));
  GemmParams p{}; p.a = A.data(); p.b = B.data(); p.c = C; p.tma_store = store; p.M = M; p.N = N; p.K = K; p.share_a = pairs == PAIR_A;
  p.sam = sam; p.sak = sak; p.sbk = sbk; p.sbn = sbn; p.scm = N; p.scn = 1; p.sab = sab; p.sbb = sbb; p.scb = (int64_t)M * N; p.batch = batch;
  // split-K as src/gemm/plan.rs split_k: whole k-tiles per split, float32 partials.
  const int kt = 128 / (int)sizeof(T), chunk = ((K + splits - 1) / splits + kt - 1) / kt * kt;
  p.splits = splits > 1 ? (K + chunk - 1) / chunk : 1; p.k_chunk = p.splits > 1 ? chunk : K;
  set_kcl(p, kcl, kt);
  // as src/gemm/mod.rs set_splits (SplitSum::InPlace): a bm x bn partial per tile and range, counters zeroed
  const size_t wtiles = (size_t)batch * ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
  std::vector<float> ws(wtiles * p.splits * bm * bn, NAN);
  std::vector<int> flags(2 * wtiles, 0);
  p.ws = ws.data(); p.flags = flags.data();
  // as src/gemm/sm90.rs launch
  const int es = sizeof(T), bk = 128 / es;
  auto bstride = [&](int64_t s, uint64_t span) -> uint64_t { return batch == 1 ? ((span * es + 15) / 16) * 16 : (uint64_t)s * es; };
  const bool tf32 = std::is_same<T, float>::value;  // float32 maps are TFLOAT32: the loads round
  // (In pairs each block loads half of the shared tile: a K-major one's rows.)
  CUtensorMap ta = a_k ? myns::emu_tensor_map(A.data(), K, M, batch, sam * es, bstride(sab, (uint64_t)M * sam), bk, pairs == PAIR_A ? bm / 2 : bm, es, tf32)
                       : myns::emu_tensor_map(A.data(), M, K, batch, sak * es, bstride(sab, (uint64_t)K * sak), 64, bk, es);
  // (A K-major B tile over 256 rows, a TMA box's most, comes in two boxes.)
  CUtensorMap tb = b_k ? myns::emu_tensor_map(B.data(), K, N, batch, sbn * es, bstride(sbb, (uint64_t)N * sbn), bk, bn > 256 || pairs == PAIR_B ? bn / 2 : bn, es, tf32)
                       : myns::emu_tensor_map(B.data(), N, K, batch, sbk * es, bstride(sbb, (uint64_t)K * sbk), 64, bk, es);
  // The output's map, as src/gemm/sm90.rs launch encodes it.
  CUtensorMap tc = ta;  // (not read unless store 1)
  if (store == 1) {
    if (N % 8 || c_off % 8) { fprintf(stderr, "store 1 needs 16-byte aligned rows\n"); abort(); }
    const int c_box = MYNS_WG_C_BOX(bn);
    tc = myns::emu_tensor_map(C, N, M, batch, (uint64_t)N * es, bstride(p.scb, (uint64_t)M * N), c_box, 64, es, false, c_box == 64);
  }
  // Work items: tiles, or pairs of them.
  const int per_m = pairs == PAIR_B ? 2 : 1, per_n = pairs == PAIR_A ? 2 : 1, cl = pairs ? 2 : kcl;
  const unsigned tiles = (unsigned)(((M + bm * per_m - 1) / (bm * per_m)) * ((N + bn * per_n - 1) / (bn * per_n)) * batch * p.splits),
                 grid = tiles < blocks ? tiles : blocks;
  launch(kern, grid * cl, 1, ta, tb, p, cl, &tc);
  int bad = 0;
  // Every (tile, consumer) counted each K range once (ping-pong: one counter per tile).
  for (size_t i = 0; p.splits > 1 && i < flags.size(); ++i)
    if (flags[i] != (pp && i % 2 ? 0 : p.splits)) { if (bad < 3) fprintf(stderr, "  counter %zu: %d arrivals of %d\n", i, flags[i], (int)p.splits); ++bad; }
  for (int bz = 0; bz < batch; ++bz) for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
    double ref = 0, mag = 0;
    for (int k = 0; k < K; ++k) { double x = tof(A[bz * sab + i * sam + k * sak]), y = tof(B[bz * sbb + k * sbk + j * sbn]); ref += x * y; mag += fabs(x * y); }
    double out = tof(C[(size_t)bz * M * N + (size_t)i * N + j]);
    if (!(fabs(out - ref) <= mag * (2 * K * 6e-8 + 2 * u_in + u_in * u_in) + fabs(ref) * u_out * 1.01 + 1e-30)) { if (bad < 3) fprintf(stderr, "  [%d,%d,%d] %g vs %g\n", bz, i, j, out, ref); ++bad; }
  }
  // Nothing written outside the output.
  for (size_t e = 0; e < C0.size(); ++e)
    if ((e < (size_t)c_off || e >= (size_t)c_off + (size_t)batch * M * N) && !std::isnan(tof(C0[e]))) {
      if (bad < 3) fprintf(stderr, "  wrote element %zd outside the output\n", (ptrdiff_t)e - c_off);
      ++bad;
    }
  ++cases;
  printf("%s %s%d%s %c%c b%d %dx%dx%d/%d %s%s: %s\n", std::is_same<T, float>::value ? "tf32" : std::is_same<T, __half>::value ? "f16" : "bf16",
         pp == PPH ? "wgh" : pp ? "wgp" : "wg", bn, pairs == PAIR_A ? "n2" : pairs == PAIR_B ? "c2" : "", a_k ? 'k' : 'm', b_k ? 'k' : 'n', batch, M, K, N, (int)p.splits,
         grid_note(kcl > 1 ? grid : blocks, p).c_str(),
         store == 1 ? " tma" : store == 2 ? " staged" : "", bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

// The register-A tf32 kernel (mm_wgr*) as src/gemm/sm90.rs try_tf32 runs
// it: c^T = b^T a^T with b row-major (N-contiguous) read through registers
// and a K-major, read in place when TMA can (`direct`: rows of a multiple
// of 4 floats) or else from a K-major copy (made here on the host); the TMA
// loads round both to TF32 (TFLOAT32 maps); split-K partials summed by the
// kernel. `half`: the 64-row ping-pong form (mm_wgrh*) on `blocks` blocks,
// whose consumers take the tiles in turn.
static const WgKern reg_kernels[4] = {mm_wgr256_tf32, mm_wgr192_tf32, mm_wgr128_tf32, mm_wgr64_tf32};
static const WgKern reg_half_kernels[2] = {mm_wgrh128_tf32, mm_wgrh64_tf32};
static const WgKern reg_kc_kernels[3] = {mm_wgrk192_tf32, mm_wgrk128_tf32, mm_wgrk64_tf32};
void run_case_reg(int bn, int batch, int M, int K, int N, int splits = 1, bool direct = false, bool half = false, unsigned blocks = 2, int kcl = 1) {
  const int bm = half ? 64 : 128;
  std::mt19937 rng(M * 7 + K * 13 + N + batch + 1); std::normal_distribution<float> nd;
  auto r4 = [](int x) { return (x + 3) / 4 * 4; };
  const int64_t sam = direct ? r4(K) + 4 : K + 3, sab = (int64_t)M * sam;  // a: any layout (the copy reads it)
  const int64_t sbk = r4(N) + 4, sbb = (int64_t)K * sbk;  // b row-major, 16-byte rows
  const int64_t ld = direct ? sam : r4(K);
  std::vector<float> A(batch * sab + 4), B(batch * sbb + 8), C((size_t)batch * M * N, NAN), Ar;
  for (auto& x : A) x = nd(rng); for (auto& x : B) x = nd(rng);
  if (!direct) {
    Ar.assign((size_t)batch * M * ld, NAN);
    for (int z = 0; z < batch; ++z) for (int i = 0; i < M; ++i) for (int k = 0; k < K; ++k)
      Ar[((size_t)z * M + i) * ld + k] = A[z * sab + i * sam + k];
  }
  float* const Bp = direct ? A.data() : Ar.data();  // B' of the transposed problem
  // Transposed problem: M' = N, N' = M; A' = b^T (m'-contiguous), B' = a or its copy, C' = c^T.
  GemmParams p{}; p.a = B.data(); p.b = Bp; p.c = C.data(); p.M = N; p.N = M; p.K = K;
  p.sam = 1; p.sak = sbk; p.sab = sbb; p.sbk = 1; p.sbn = ld; p.sbb = (int64_t)M * ld;
  p.scm = 1; p.scn = N; p.scb = (int64_t)M * N; p.batch = batch;
  const int kt = 32, chunk = ((K + splits - 1) / splits + kt - 1) / kt * kt;
  p.splits = splits > 1 ? (K + chunk - 1) / chunk : 1; p.k_chunk = p.splits > 1 ? chunk : K;
  set_kcl(p, kcl, kt);
  const size_t wtiles = (size_t)batch * ((N + bm - 1) / bm) * ((M + bn - 1) / bn);
  std::vector<float> ws(wtiles * p.splits * bm * bn, NAN);
  std::vector<int> flags(2 * wtiles, 0);
  p.ws = ws.data(); p.flags = flags.data();
  auto bstride = [&](int64_t s, uint64_t span) -> uint64_t { return batch == 1 ? ((span * 4 + 15) / 16) * 16 : (uint64_t)s * 4; };
  CUtensorMap ta = myns::emu_tensor_map(B.data(), N, K, batch, sbk * 4, bstride(sbb, (uint64_t)K * sbk), 32, 32, 4, true);
  CUtensorMap tb = myns::emu_tensor_map(Bp, K, M, batch, ld * 4, bstride(p.sbb, (uint64_t)M * ld), 32, bn, 4, true);
  unsigned tiles = (unsigned)(((N + bm - 1) / bm) * ((M + bn - 1) / bn) * batch * p.splits);
  const WgKern kern = half ? reg_half_kernels[bn == 128 ? 0 : 1] : kcl > 1 ? reg_kc_kernels[width_index(bn) - 1] : reg_kernels[width_index(bn)];
  launch(kern, (tiles < blocks ? tiles : blocks) * kcl, 1, ta, tb, p, kcl);
  int bad = 0;
  // (Ping-pong: one counter per tile.)
  for (size_t i = 0; p.splits > 1 && i < flags.size(); ++i)
    if (flags[i] != (half && i % 2 ? 0 : p.splits)) { if (bad < 3) fprintf(stderr, "  counter %zu: %d arrivals of %d\n", i, flags[i], (int)p.splits); ++bad; }
  const double u_in = 1.0 / 2048;  // both operands rounded to nearest
  for (int bz = 0; bz < batch; ++bz) for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
    double ref = 0, mag = 0;
    for (int k = 0; k < K; ++k) { double x = A[bz * sab + i * sam + k], y = B[bz * sbb + k * sbk + j]; ref += x * y; mag += fabs(x * y); }
    double out = C[(size_t)bz * M * N + (size_t)i * N + j];
    if (!(fabs(out - ref) <= mag * (2 * K * 6e-8 + 2 * u_in + u_in * u_in) + 1e-30)) { if (bad < 3) fprintf(stderr, "  [%d,%d,%d] %g vs %g\n", bz, i, j, out, ref); ++bad; }
  }
  ++cases;
  printf("tf32 reg wgr%s%d b%d %dx%dx%d/%d %s%s: %s\n", half ? "h" : "", bn, batch, M, K, N, (int)p.splits, grid_note(tiles < blocks ? tiles : blocks, p).c_str(),
         direct ? " a in place" : "", bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

// Both operands rounded to TF32 to nearest, ties to even, not truncated as
// the tensor cores would: with K = 32 terms x * 2^-5, x = 1 + 3 * 2^-12
// (between the TF32 neighbours 1 and 1 + 2^-10, nearer the upper), every
// output is exactly 1 + 2^-10; truncating x gives 1 (the general bound
// above lets one operand's truncation pass). `tie`: x = 1 + 2^-11, which
// goes to the even 1. reg: the register-A kernel (x in a: B' in shared
// memory; in b: A' through registers), else the K-major kernel.
void run_case_rounding(bool reg, int bn, bool x_in_a, bool tie) {
  const int M = 64, K = 32, N = 48;
  const float x = tie ? 1.0f + 1.0f / 2048 : 1.0f + 3.0f / 4096, y = 1.0f / 32, want = tie ? 1.0f : 1.0f + 1.0f / 1024;
  std::vector<float> A((size_t)M * K, x_in_a ? x : y), B((size_t)K * N, x_in_a ? y : x), C((size_t)M * N, NAN);
  std::vector<float> ws(64 * 1024, NAN); std::vector<int> flags(64, 0);
  GemmParams p{}; p.batch = 1; p.splits = 1; p.k_chunk = K; p.ws = ws.data(); p.flags = flags.data();
  // A K-contiguous operand of `rows` rows, boxes of `box` rows, read as TF32.
  auto kmap = [&](float* ptr, int rows, int box) {
    return myns::emu_tensor_map(ptr, K, rows, 1, K * 4, ((uint64_t)rows * K * 4 + 15) / 16 * 16, 32, box, 4, true);
  };
  if (reg) {  // c^T = b^T a^T: A' = b (N-contiguous), B' = a (K-contiguous)
    p.a = B.data(); p.b = A.data(); p.c = C.data(); p.M = N; p.N = M; p.K = K;
    p.sam = 1; p.sak = N; p.sab = (int64_t)K * N; p.sbk = 1; p.sbn = K; p.sbb = (int64_t)M * K;
    p.scm = 1; p.scn = N; p.scb = (int64_t)M * N;
    const CUtensorMap ta = myns::emu_tensor_map(B.data(), N, K, 1, N * 4, ((uint64_t)K * N * 4 + 15) / 16 * 16, 32, 32, 4, true);
    launch(reg_kernels[width_index(bn)], 1, 1, ta, kmap(A.data(), M, bn), p);
  } else {  // b read K-contiguous (every element is the same)
    p.a = A.data(); p.b = B.data(); p.c = C.data(); p.M = M; p.N = N; p.K = K;
    p.sak = 1; p.sam = K; p.sab = (int64_t)M * K; p.sbk = 1; p.sbn = K; p.sbb = (int64_t)N * K;
    p.scn = 1; p.scm = N; p.scb = (int64_t)M * N;
    launch(tf32_kk[width_index(bn)], 1, 1, kmap(A.data(), M, 128), kmap(B.data(), N, bn), p);
  }
  int bad = 0;
  for (size_t i = 0; i < C.size(); ++i)
    if (C[i] != want) { if (bad < 3) fprintf(stderr, "  [%zu] %.9g, want %.9g\n", i, C[i], want); ++bad; }
  ++cases;
  printf("tf32 %s%d rounds %s to nearest%s: %s\n", reg ? "wgr" : "wg", bn, x_in_a ? "a" : "b", tie ? " (a tie, to even)" : "", bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

// K ranges summed across the blocks of a cluster (p.kcl 2 and 4): every
// width that has the form (64, 128, 192), both 16-bit types (layouts
// mixed), tf32 K-major and register-A; fewer clusters than tiles, so that
// a cluster walks several (and the ranks meet their barriers once per
// item); ranks whose range is past K (K = 72 in clusters of 4, K = 1);
// batches; the staged output.
static void k_cluster_cases() {
  const double ubf = 1.0 / 256, uh = 1.0 / 2048, utf = 1.0 / (1 << 24);
  run_case<__nv_bfloat16>(128, COOP, true, true, 1, 130, 300, 200, ubf, 0, 1, 2, 0, 0, 2);
  run_case<__half>(128, COOP, false, false, 2, 70, 72, 130, uh, 0, 1, 3, 0, 0, 4);
  run_case<__nv_bfloat16>(64, COOP, true, false, 2, 130, 520, 100, ubf, 0, 1, 2, 0, 0, 4);
  run_case<__half>(64, COOP, false, true, 1, 9, 1, 5, uh, 0, 1, 2, 0, 0, 2);
  run_case<__nv_bfloat16>(192, COOP, false, false, 1, 130, 200, 2 * 192 + 13, ubf, 0, 1, 3, 2, 1, 2);
  run_case<__half>(192, COOP, true, true, 2, 70, 72, 200, uh, 0, 1, 2, 2, 3, 4);
  run_case<__nv_bfloat16>(192, COOP, true, true, 1, 1, 1, 1, ubf, 0, 1, 2, 0, 0, 4);
  run_case<float>(64, COOP, true, true, 2, 70, 100, 260, utf, 1.0 / 2048, 1, 3, 0, 0, 2);
  run_case<float>(128, COOP, true, true, 1, 130, 72, 129, utf, 1.0 / 2048, 1, 1, 0, 0, 4);
  run_case<float>(192, COOP, true, true, 1, 17, 1, 200, utf, 1.0 / 2048, 1, 2, 0, 0, 4);
  run_case_reg(64, 2, 70, 72, 100, 1, false, false, 2, 4);
  run_case_reg(128, 1, 130, 300, 260, 1, true, false, 2, 2);
  run_case_reg(192, 2, 17, 40, 129, 1, false, false, 1, 4);
  run_case_reg(64, 1, 5, 1, 3, 1, false, false, 2, 2);
}

// Pairs of blocks in a cluster: sharing A (side by side; a K-major A in
// halves of its rows, an M-major one's 64-row boxes one per rank) and
// sharing B (one above the other; likewise B); a pair's second tile past
// the last column or row (odd counts); fewer pairs than items, so that a
// pair walks several; batches, split K, both staged outputs; cooperative,
// ping-pong and 64-row tiles; TF32 K-major.
static void pair_cases() {
  const double ubf = 1.0 / 256, uh = 1.0 / 2048, utf = 1.0 / (1 << 24);
  run_case<__nv_bfloat16>(64, COOP, true, false, 1, 130, 200, 7 * 64 - 3, ubf, 0, 1, 2, 0, 0, 1, PAIR_A);
  run_case<__half>(64, COOP, false, true, 2, 70, 200, 300, uh, 0, 2, 2, 0, 0, 1, PAIR_A);
  run_case<__nv_bfloat16>(128, COOP, true, true, 1, 136, 72, 3 * 128 + 16, ubf, 0, 1, 2, 1, 0, 1, PAIR_A);
  run_case<__half>(192, COOP, false, false, 1, 130, 130, 2 * 192 + 13, uh, 0, 1, 1, 2, 1, 1, PAIR_A);
  run_case<float>(128, COOP, true, true, 1, 130, 100, 300, utf, 1.0 / 2048, 1, 2, 0, 0, 1, PAIR_A);
  run_case<__nv_bfloat16>(64, PPH, true, true, 1, 100, 72, 300, ubf, 0, 1, 2, 0, 0, 1, PAIR_A);
  run_case<__half>(128, PPH, false, true, 2, 70, 40, 200, uh, 0, 1, 1, 0, 0, 1, PAIR_A);
  run_case<__half>(128, PP, false, false, 1, 130, 72, 260, uh, 0, 1, 2, 0, 0, 1, PAIR_A);
  run_case<__nv_bfloat16>(256, COOP, true, true, 1, 3 * 128 + 5, 72, 300, ubf, 0, 1, 2, 0, 0, 1, PAIR_B);
  run_case<__half>(192, COOP, false, false, 2, 200, 100, 2 * 192 + 13, uh, 0, 1, 2, 0, 0, 1, PAIR_B);
  run_case<__nv_bfloat16>(64, COOP, true, false, 1, 300, 200, 136, ubf, 0, 2, 2, 1, 0, 1, PAIR_B);
  run_case<float>(64, COOP, true, true, 1, 300, 72, 100, utf, 1.0 / 2048, 1, 1, 0, 0, 1, PAIR_B);
}

int main(int argc, char** argv) {
  const bool big = argc > 1 && std::string(argv[1]) == "big";
  const double ubf = 1.0 / 256, uh = 1.0 / 2048, utf = 1.0 / (1 << 24);
  if (argc > 1 && std::string(argv[1]) == "kc") {  // ./wg kc: the K-range clusters alone
    k_cluster_cases();
    printf("%d cases, %d failures\n", cases, fails);
    return fails != 0;
  }
  if (argc > 1 && std::string(argv[1]) == "pairs") {  // ./wg pairs: the pairs alone
    pair_cases();
    printf("%d cases, %d failures\n", cases, fails);
    return fails != 0;
  }
  // Cooperative tiles: every width, both 16-bit types, each layout at least
  // once per width; edges in M, N and K; batches.
  int shapes[][4] = {{1, 1, 1, 1}, {1, 130, 72, 300}, {2, 70, 100, 260}, {1, 200, 330, 513}};
  int l = 0;
  for (int bn : {256, 192, 128, 64})
    for (auto& s : shapes) {
      if (!big && bn != 256 && bn != 192 && s[0] * s[1] * s[3] > 70000) continue;
      for (int rep = 0; rep < (big ? 4 : 1); ++rep, ++l) {
        const bool a_k = (l & 2) == 0, b_k = (l & 1) == 0;
        run_case<__nv_bfloat16>(bn, false, a_k, b_k, s[0], s[1], s[2], s[3], ubf);
        run_case<__half>(bn, false, !a_k, b_k, s[0], s[1], s[2], s[3], uh);
        // tf32: K-major operands only; inputs rounded to 10 mantissa bits by the loads.
        run_case<float>(bn, false, true, true, s[0], s[1], s[2], s[3], utf, 1.0 / 2048);
      }
    }
  // The 320-wide tile: every layout, both 16-bit types; edges in M, N (the
  // last column of tiles 60 wide) and K; a batch; split K; the staged
  // output copied out by the warps.
  for (int lay = 0; lay < 4; ++lay) {
    const bool a_k = lay < 2, b_k = lay % 2 == 0;
    run_case<__nv_bfloat16>(320, COOP, a_k, b_k, 1, 130, 72, 700, ubf);
    run_case<__half>(320, COOP, a_k, b_k, lay == 3 ? 2 : 1, 70, 100, 330, uh);
  }
  run_case<__nv_bfloat16>(320, COOP, true, true, 1, 1, 1, 1, ubf);
  run_case<__half>(320, COOP, false, true, 1, 130, 300, 400, uh, 0, 3);
  run_case<__nv_bfloat16>(320, COOP, true, false, 1, 70, 72, 650, ubf, 0, 1, 2, 2, 1);
  // Ping-pong, on 128- and 64-row tiles: several tiles per block, so the
  // consumers alternate (one block: every tile; two: interleaved), every
  // layout; 64-row tiles on M = 130 (three rows of tiles, the last of two
  // rows); one element.
  for (int pp : {PP, PPH})
    for (int bn : {128, 64}) {
      for (int lay = 0; lay < 4; ++lay) {
        const bool a_k = lay < 2, b_k = lay % 2 == 0;
        run_case<__nv_bfloat16>(bn, pp, a_k, b_k, 1, pp == PP ? 300 : 130, 136, 200, ubf, 0, 1, lay % 2 ? 1 : 2);
        if (big || lay == (pp == PP ? 3 : 2)) run_case<__half>(bn, pp, a_k, b_k, 2, pp == PP ? 129 : 70, 70, 130, uh, 0, 1, 3);
      }
      if (bn == 64) run_case<__nv_bfloat16>(bn, pp, true, true, 1, 1, 1, 1, ubf);
    }
  run_case<__half>(128, PPH, true, true, 1, 70, 40, 65, uh);  // one tile column, partly past N
  run_case<__nv_bfloat16>(128, PPH, false, false, 2, 130, 300, 260, ubf, 0, 3);
  run_case<__half>(64, PPH, true, false, 1, 64, 330, 129, uh, 0, 4, 3);
  // The 144-wide 64-row tile (B K-major): both A layouts, the edges in M,
  // N (past a tile and inside one) and K, batches, split-K (18 float4s a
  // thread: summed 6 at a time).
  run_case<__nv_bfloat16>(144, PPH, true, true, 1, 130, 136, 300, ubf, 0, 1, 2);
  run_case<__half>(144, PPH, false, true, 2, 70, 70, 150, uh, 0, 1, 3);
  run_case<__nv_bfloat16>(144, PPH, false, true, 1, 64, 330, 100, ubf, 0, 3, 2);
  run_case<__half>(144, PPH, true, true, 1, 1, 1, 1, uh);
  // The cooperative widths of one wave (B K-major): both A layouts and
  // 16-bit types, the edges in M, N (past a tile and inside one) and K,
  // batches, one element, split K (112: 14 float4s a thread summed at once;
  // 144: 6 at a time); stored from registers, and (112 to 176) staged and
  // copied out by the warps (rows TMA cannot address; their TMA stores:
  // below), whole or in rounds of 48, 32 and 16 columns, whose rows
  // have fewer lanes than a row's unaligned ends have elements.
  for (int bn : {96, 112, 144, 160, 176}) {
    run_case<__nv_bfloat16>(bn, COOP, bn % 32 == 0, true, 1, 130, 136, 2 * bn + 13, ubf, 0, 1, 2);
    run_case<__half>(bn, COOP, bn % 32 != 0, true, 2, 70, 70, bn + 1, uh, 0, 1, 3);
  }
  run_case<__half>(96, COOP, true, true, 1, 1, 1, 1, uh);
  run_case<__nv_bfloat16>(112, COOP, true, true, 1, 64, 330, 200, ubf, 0, 4, 2);
  run_case<__nv_bfloat16>(144, COOP, false, true, 1, 130, 330, 300, ubf, 0, 3, 2);
  run_case<__half>(176, COOP, true, true, 2, 200, 200, 190, uh, 0, 2, 3);
  for (int bn : {112, 144, 160, 176}) run_case<__nv_bfloat16>(bn, COOP, bn != 144, true, 1, 130, 72, 2 * bn + 13, ubf, 0, 1, 2, 2, bn / 16 % 8);
  run_case<__half>(144, COOP, true, true, 2, 70, 40, 145, uh, 0, 3, 2, 2, 1);
  // Split-K (persistent blocks walking splits and batches).
  run_case<__nv_bfloat16>(256, false, true, false, 2, 130, 300, 260, ubf, 0, 3);
  run_case<__half>(128, false, false, true, 1, 200, 330, 513, uh, 0, 4);
  run_case<float>(256, false, true, true, 2, 70, 100, 260, utf, 1.0 / 2048, 2);
  run_case<__nv_bfloat16>(64, true, false, false, 2, 130, 300, 260, ubf, 0, 3);
  run_case<__half>(128, true, true, true, 1, 200, 330, 513, uh, 0, 4, 1);
  // Split-K with the output staged and copied out (the last block of a
  // tile stores it as an unsplit tile is stored), three persistent blocks.
  run_case<__nv_bfloat16>(192, false, true, true, 1, 130, 520, 2 * 192 + 13, ubf, 0, 3, 3, 2, 1);
  run_case<__half>(64, false, false, false, 2, 70, 300, 131, uh, 0, 5, 3, 2, 0);
  // Outputs copied out of shared memory by the warps (rows TMA cannot
  // address): odd N, so rows start at every offset from a 16-byte boundary;
  // starts off a boundary;
  // partial pieces at both ends of a row and at the right edge; batches;
  // every width.
  for (int bn : {256, 192, 128, 64}) {
    run_case<__nv_bfloat16>(bn, false, true, false, 1, 130, 72, 2 * bn + 13, ubf, 0, 1, 2, 2, 0);
    run_case<__half>(bn, false, false, true, 2, 70, 40, bn + 1, uh, 0, 1, 2, 2, 3);
    run_case<__nv_bfloat16>(bn, false, true, true, 1, 9, 16, 5, ubf, 0, 1, 2, 2, 7);
  }
  run_case<__half>(256, false, true, true, 1, 200, 64, 1003, uh, 0, 1, 3, 2, 1);
  // TMA stores (rows 16-byte aligned): every staged width, both 16-bit
  // types and B layouts, a last row of tiles partly past M (136 = 128 + 8
  // rows), batches, split K, K ranges in a cluster.
  for (int bn : {256, 192, 128, 64, 320, 112, 144, 160, 176}) {
    const bool wq = bn % 64 != 0;  // (`WGQ`: B K-major only)
    run_case<__nv_bfloat16>(bn, COOP, true, true, 1, 136, 72, 2 * bn + 16, ubf, 0, 1, 2, 1, 0);
    run_case<__half>(bn, COOP, false, wq, 2, 70, 40, bn + 8, uh, 0, 1, 3, 1, 8);
  }
  run_case<__half>(256, COOP, true, false, 1, 264, 330, 520, uh, 0, 3, 3, 1, 0);
  run_case<__nv_bfloat16>(128, COOP, true, true, 1, 136, 200, 304, ubf, 0, 1, 2, 1, 0, 2);
  run_case<__half>(192, COOP, false, false, 1, 256, 72, 392, uh, 0, 1, 2, 1, 8, 4);
  // Register-A tf32: every width, edges in M, N and K, batches, split-K.
  int reg_shapes[][4] = {{1, 1, 1, 1}, {1, 130, 72, 300}, {2, 70, 100, 260}, {1, 17, 40, 129}};
  for (int bn : {256, 192, 128, 64})
    for (auto& s : reg_shapes) {
      if (!big && bn != 128 && s[1] > 100) continue;
      run_case_reg(bn, s[0], s[1], s[2], s[3]);
    }
  run_case_reg(128, 2, 130, 300, 260, 3);
  run_case_reg(256, 1, 70, 100, 300, 1, true);  // a read in place
  run_case_reg(64, 2, 130, 72, 100, 2, true);
  for (bool reg : {true, false})
    for (bool x_in_a : {true, false})
      for (bool tie : {false, true}) run_case_rounding(reg, reg ? 256 : 64, x_in_a, tie);
  run_case_reg(64, 1, 200, 330, 513, 4);
  // Register-A tf32 on 64-row ping-pong tiles: both widths, edges, batches,
  // one block (every tile, the consumers alternating) and two, split-K, a
  // read in place.
  for (int bn : {128, 64}) {
    run_case_reg(bn, 1, 130, 72, 300, 1, false, true, 1);
    run_case_reg(bn, 2, 70, 100, 130, 1, false, true, 2);
    run_case_reg(bn, 1, 1, 1, 1, 1, false, true);
  }
  run_case_reg(128, 2, 130, 300, 260, 3, false, true, 3);
  run_case_reg(64, 1, 200, 330, 129, 4, true, true, 2);
  k_cluster_cases();
  pair_cases();
  printf("%d cases, %d failures\n", cases, fails);
  return fails != 0;
}
