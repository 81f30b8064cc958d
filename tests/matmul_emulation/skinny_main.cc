// Runs the real kernels/gemm_skinny.cu (skinny products, thread-block
// clusters reducing through distributed shared memory; the streaming build's
// TMA ring on emu_tma.h's mbarriers and TMA loads) and
// kernels/gemm_pack.cu (staging copies) on the CPU under the fiber
// emulation, against double-precision references; host set-up mirrors
// src/gemm/skinny.rs and src/gemm/pack.rs.
#include "emu_prelude.h"
#include "emu_skinny.h"
#include "gemm_skinny.cu"
#include "gemm_pack.cu"
#include <functional>
#include <random>
#include <string>
#include <cstring>

static std::function<void()> g_body;
static void fiber_main() { g_body(); emu::cur->done = true; }

// Runs `body` for every block of the grid; the `cluster_y` blocks along y of
// one cluster run together (one slot each).
static void launch(std::function<void()> body, emu::Dim grid, emu::Dim block, unsigned cluster_y, size_t smem_floats) {
  g_body = body;
  emu::grid_dim = grid; emu::block_dim = block;
  const int threads = block.x * block.y * block.z;
  emu::nthreads = threads;
  emu::cluster_ranks = cluster_y;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y0 = 0; y0 < grid.y; y0 += cluster_y)
      for (unsigned x = 0; x < grid.x; ++x) {
        std::vector<emu::Fiber> fibers((size_t)threads * cluster_y);
        emu::block_smem.assign(cluster_y, std::vector<float>(smem_floats, NAN));
        emu::bar_count = emu::bar_gen = 0; memset(emu::bar_counts, 0, sizeof emu::bar_counts);
        memset(emu::warp_count, 0, sizeof emu::warp_count); emu::cluster_count = 0;
        for (unsigned r = 0; r < cluster_y; ++r)
          for (int t = 0; t < threads; ++t) {
            auto& f = fibers[r * threads + t];
            f.done = false; f.slot = (int)r; f.bid = {x, y0 + r, z};
            f.tid = {(unsigned)(t % block.x), (unsigned)(t / block.x % block.y), (unsigned)(t / (block.x * block.y))};
            f.stack.resize(256 * 1024);
            getcontext(&f.ctx); f.ctx.uc_stack.ss_sp = f.stack.data(); f.ctx.uc_stack.ss_size = f.stack.size(); f.ctx.uc_link = &emu::sched;
            makecontext(&f.ctx, fiber_main, 0);
          }
        bool all = false; long idle = 0, last = -1;
        while (!all) {
          all = true; int finished = 0;
          for (auto& f : fibers) { if (f.done) { ++finished; continue; } all = false; emu::cur = &f; swapcontext(&emu::sched, &f.ctx); }
          const long now = (emu::progress + myns::emu_progress) * 100000 + finished;
          if (now == last) { if (++idle > 1000) { fprintf(stderr, "DEADLOCK in cluster %u,%u,%u\n", x, y0, z); exit(3); } } else { idle = 0; last = now; }
        }
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

using SkinnyKern = void (*)(const SkinnyParams);
#define SK(dt) {{{mm_skinny_##dt##_kv_m1, mm_skinny_##dt##_kv_m2}, {mm_skinny_##dt##_ke_m1, mm_skinny_##dt##_ke_m2}}, \
                {{mm_skinny_##dt##_nv_m1, mm_skinny_##dt##_nv_m2}, {mm_skinny_##dt##_ne_m1, mm_skinny_##dt##_ne_m2}}}
static const SkinnyKern skinny_f16[2][2][2] = SK(f16), skinny_bf16[2][2][2] = SK(bf16), skinny_f32[2][2][2] = SK(f32);
template <class T> const char* type_name() { return std::is_same<T, __half>::value ? "f16" : std::is_same<T, float>::value ? "f32" : "bf16"; }

// Elements of out (c, or c^T when `tout`) outside the bound against the
// double-precision product of x and the weights; `u_in`: the unit roundoff
// of operands rounded before they multiply (TF32: 2^-11, else 0).
template <class T>
int count_bad(const std::vector<T>& X, int64_t sxb, int64_t sxm, const T* w0, int64_t sw, int64_t swb, bool w_k, const std::vector<T>& C,
              int batch, int M, int K, int N, bool tout, double u_in = 0) {
  const double u_out = std::is_same<T, __half>::value ? 1.0 / 2048 : std::is_same<T, float>::value ? 0x1p-24 : 1.0 / 256;
  int bad = 0;
  for (int z = 0; z < batch; ++z) for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
    double ref = 0, mag = 0;
    for (int kk = 0; kk < K; ++kk) {
      const double a = tof(X[z * sxb + i * sxm + kk]);
      const double b = tof(w0[z * swb + (w_k ? j * sw + kk : kk * sw + j)]);
      ref += a * b; mag += fabs(a * b);
    }
    const double out = tof(C[(size_t)z * M * N + (tout ? (size_t)j * M + i : (size_t)i * N + j)]);
    if (!(fabs(out - ref) <= mag * (2.01 * u_in + 2 * K * 6e-8) + fabs(ref) * u_out * 1.01 + 1e-30)) { if (bad < 3) fprintf(stderr, "  [%d,%d,%d] %g vs %g\n", z, i, j, out, ref); ++bad; }
  }
  return bad;
}

// x [batch][M][K] (rows padded to 8), weights K-major (w[n][k]) or N-major
// (w[k][n]), aligned or not (row stride +1 and an odd start: element loads),
// `ranks` blocks per cluster; out transposed (c^T written, as src/gemm runs
// N <= 16) when `tout`.
template <class T>
void skinny_case(bool w_k, bool aligned, int ranks, int batch, int M, int K, int N, bool tout = false) {
  std::mt19937 rng(M * 31 + K * 7 + N + batch + ranks); std::normal_distribution<float> nd;
  const int64_t vec = 16 / sizeof(T);  // elements per 16 bytes
  const int64_t sxm = (K + vec - 1) / vec * vec, sxb = M * sxm;
  const int64_t inner = w_k ? K : N, outer = w_k ? N : K;
  const int64_t sw = aligned ? (inner + vec - 1) / vec * vec : inner + 1, off = aligned ? 0 : 1;
  const int64_t swb = outer * sw + (aligned ? 0 : 3);
  alignas(16) static T dummy; (void)dummy;
  std::vector<T> X(batch * sxb + 8), W(batch * swb + off + 16), C((size_t)batch * M * N, fromf<T>(NAN));
  for (auto& v : X) v = fromf<T>(nd(rng)); for (auto& v : W) v = fromf<T>(nd(rng));
  const T* w0 = W.data() + off;
  SkinnyParams p{};
  p.x = X.data(); p.w = w0; p.c = C.data(); p.M = M; p.N = N; p.K = K; p.sxm = sxm; p.sxb = sxb; p.sw = sw; p.swb = swb;
  p.scm = tout ? 1 : N; p.scn = tout ? M : 1; p.scb = (int64_t)M * N; p.batch = batch;
  p.k_chunk = ((K + ranks - 1) / ranks + 31) / 32 * 32;  // src/gemm/plan.rs skinny_plan
  const int mt = (M + 7) / 8;
  const SkinnyKern* table = std::is_same<T, __half>::value ? &skinny_f16[0][0][0]
                            : std::is_same<T, float>::value ? &skinny_f32[0][0][0]
                                                            : &skinny_bf16[0][0][0];
  const SkinnyKern k = table[(!w_k) * 4 + (!aligned) * 2 + (mt - 1)];
  const size_t smem = (size_t)MYNS_SKINNY_WARPS * mt * 8 * MYNS_SKINNY_NW;
  launch([&] { k(p); }, {(unsigned)((N + 63) / 64), (unsigned)ranks, (unsigned)batch}, {256, 1, 1}, ranks, smem);
  const int bad = count_bad(X, sxb, sxm, w0, sw, swb, w_k, C, batch, M, K, N, tout);
  ++cases;
  printf("skinny %s %c%c ranks %d b%d %dx%dx%d%s: %s\n", type_name<T>(), w_k ? 'k' : 'n', aligned ? 'v' : 'e', ranks, batch, M, K, N, tout ? " c^T" : "", bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

// The streaming build (16-byte aligned weight rows), tensor maps as
// src/gemm/skinny.rs `launch_tma` builds them (boxes one 128-byte swizzle
// atom wide: 64 k of 16-bit types, 32 of float32, whose N-major weights
// come as two boxes of 32 n); `gz` blocks along z (fewer than `batch`: a
// block runs several batches, its ring going on); `ranks` blocks per
// cluster, each a K range of whole stages (src/gemm/plan.rs skinny_tma_plan).
// Every case runs on each ring the kernel is built with (`tma_ring`: an
// index into MYNS_SKINNY_TMA_STAGES).
using SkinnyTmaKern = void (*)(const CUtensorMap, const CUtensorMap, const SkinnyParams);
// The builds (MYNS_SKINNY_TMA_BUILDS, from src/gemm/tiles.rs skinny_tma_built).
struct SkinnyTmaBuild {
  const char* dt;
  int mt, stages;
  SkinnyTmaKern k, n;
};
#define SKT_BUILD(dt, MT, S) {#dt, MT, S, mm_skinny_tma_##dt##_k_m##MT##_s##S, mm_skinny_tma_##dt##_n_m##MT##_s##S},
static const SkinnyTmaBuild skinny_tma_builds[] = {MYNS_SKINNY_TMA_BUILDS(SKT_BUILD)};
#define SKT_STAGES(S) S,
static const int tma_stages[] = {MYNS_SKINNY_TMA_STAGES(SKT_STAGES)};
static int tma_ring = 0;
// `tf32` (float32): maps of element type TFLOAT32 and the mma build.
template <class T>
void skinny_tma_case(bool w_k, int batch, int M, int K, int N, unsigned gz, bool tout = false, int ranks = 1, bool tf32 = false) {
  std::mt19937 rng(M * 37 + K * 5 + N + batch + ranks); std::normal_distribution<float> nd;
  const uint64_t es = sizeof(T), vec = 16 / es;
  const int64_t sxm = (K + vec - 1) / vec * vec, sxb = M * sxm;
  const int64_t inner = w_k ? K : N, outer = w_k ? N : K;
  const int64_t sw = (inner + vec - 1) / vec * vec, swb = outer * sw;
  std::vector<T> X(batch * sxb + 8), W(batch * swb + 16), C((size_t)batch * M * N, fromf<T>(NAN));
  for (auto& v : X) v = fromf<T>(nd(rng)); for (auto& v : W) v = fromf<T>(nd(rng));
  SkinnyParams p{};
  p.x = X.data(); p.w = W.data(); p.c = C.data(); p.M = M; p.N = N; p.K = K; p.sxm = sxm; p.sxb = sxb; p.sw = sw; p.swb = swb;
  p.scm = tout ? 1 : N; p.scn = tout ? M : 1; p.scb = (int64_t)M * N; p.batch = batch;
  const int64_t bk = 128 / (int64_t)sizeof(T);
  p.k_chunk = ((K + ranks - 1) / ranks + bk - 1) / bk * bk;
  const int mt = M <= 8 ? 1 : M <= 16 ? 2 : M <= 32 ? 4 : 8;  // the kernel's m blocks (src/gemm/plan.rs skinny_tma_plan)
  const char* dts[] = {"f16", "bf16", "f32", "tf32"};
  const char* dt = dts[std::is_same<T, __half>::value ? 0 : std::is_same<T, float>::value ? (tf32 ? 3 : 2) : 1];
  const SkinnyTmaBuild* build = nullptr;
  for (const auto& b : skinny_tma_builds)
    if (!strcmp(b.dt, dt) && b.mt == mt && b.stages == tma_stages[tma_ring]) build = &b;
  if (!build) return;  // not built (16 stages of 8 m blocks)
  // skinny.rs: a dimension of one element (or batch) gets a stride spanning the data before it.
  auto stride = [&](int64_t s, uint64_t len, uint64_t span) { return len <= 1 ? (span * es + 15) / 16 * 16 : (uint64_t)s * es; };
  const uint64_t wd[3] = {(uint64_t)inner, (uint64_t)outer, (uint64_t)batch};
  const uint64_t w_pitch = stride(sw, wd[1], wd[0]);
  const uint64_t ws[2] = {w_pitch, stride(swb, batch, wd[1] * w_pitch / es)};
  const uint64_t xd[3] = {(uint64_t)K, (uint64_t)M, (uint64_t)batch};
  const uint64_t x_pitch = stride(sxm, M, K);
  const uint64_t xs[2] = {x_pitch, stride(sxb, batch, M * x_pitch / es)};
  const uint32_t atom = (uint32_t)(128 / es);
  const CUtensorMap tw = myns::emu_tensor_map(W.data(), wd[0], wd[1], wd[2], ws[0], ws[1], atom, w_k ? MYNS_SKINNY_NW : atom, (int)es, tf32);
  const CUtensorMap tx = myns::emu_tensor_map(X.data(), xd[0], xd[1], xd[2], xs[0], xs[1], atom, 8 * mt, (int)es, tf32);
  const SkinnyTmaKern k = w_k ? build->k : build->n;
  // src/gemm/tiles.rs skinny_tma_smem
  const size_t stage = 128 * MYNS_SKINNY_NW + mt * 8 * 128;
  const size_t smem = MYNS_SKINNY_TMA_CW * mt * 8 * MYNS_SKINNY_NW * 4 + 1024 + tma_stages[tma_ring] * (stage + 16);
  launch([&] { k(tw, tx, p); }, {(unsigned)((N + 63) / 64), (unsigned)ranks, gz}, {(MYNS_SKINNY_TMA_CW + 1) * 32, 1, 1}, ranks, smem / 4);
  const int bad = count_bad(X, sxb, sxm, W.data(), sw, swb, w_k, C, batch, M, K, N, tout, tf32 ? 0x1p-11 : 0);
  ++cases;
  printf("skinny_tma s%d %s %c ranks %d b%d (%u blocks along z) %dx%dx%d%s: %s\n", tma_stages[tma_ring], tf32 ? "tf32" : type_name<T>(), w_k ? 'k' : 'n', ranks, batch, gz, M, K, N, tout ? " c^T" : "", bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

// gemm_pack_rows / gemm_pack_gather as src/gemm/pack.rs launches them:
// source (z, r, c) at z*sb + r*sr + c*sc from an odd start, destination rows
// of `ld` (16-byte multiples) with zeros past `cols`.
template <class T>
void pack_case(bool rows_kernel, int batch, int rows, int cols, int64_t sb, int64_t sr, int64_t sc, int64_t start) {
  std::mt19937 rng(rows * 5 + cols + (int)sb); std::normal_distribution<float> nd;
  const int vec = 16 / sizeof(T);
  const int64_t ld = (cols + vec - 1) / vec * vec;
  const int64_t span = start + (batch - 1) * sb + (rows - 1) * sr + (cols - 1) * sc + 1;
  std::vector<T> S(span + 8), D((size_t)batch * rows * ld + 8, fromf<T>(NAN));
  for (auto& v : S) v = fromf<T>(nd(rng) * 1.001f);
  // A 16-byte aligned base, then the odd start.
  PackParams p{S.data() + start, D.data(), batch, rows, cols, sb, sr, sc, ld};
  if (rows_kernel) {
    const unsigned gx = (unsigned)((ld / vec + 255) / 256), gy = (unsigned)std::min<int64_t>((int64_t)batch * rows, 65535);
    if (std::is_same<T, float>::value) launch([&] { gemm_pack_rows_f32(p); }, {gx, gy, 1}, {256, 1, 1}, 1, 0);
    else if (std::is_same<T, __half>::value) launch([&] { gemm_pack_rows_f16(p); }, {gx, gy, 1}, {256, 1, 1}, 1, 0);
    else launch([&] { gemm_pack_rows_bf16(p); }, {gx, gy, 1}, {256, 1, 1}, 1, 0);
  } else {
    const emu::Dim g{(unsigned)((rows + 31) / 32), (unsigned)((ld + 31) / 32), (unsigned)batch};
    if (std::is_same<T, float>::value) launch([&] { gemm_pack_gather_f32(p); }, g, {32, 8, 1}, 1, 0);
    else if (std::is_same<T, __half>::value) launch([&] { gemm_pack_gather_f16(p); }, g, {32, 8, 1}, 1, 0);
    else launch([&] { gemm_pack_gather_bf16(p); }, g, {32, 8, 1}, 1, 0);
  }
  int bad = 0;
  for (int z = 0; z < batch; ++z) for (int r = 0; r < rows; ++r) for (int c = 0; c < ld; ++c) {
    float want = c < cols ? tof(S[start + z * sb + r * sr + c * sc]) : 0.f;
    const float got = tof(D[((size_t)z * rows + r) * ld + c]);
    if (!(got == want)) { if (bad < 3) fprintf(stderr, "  [%d,%d,%d] %g vs %g\n", z, r, c, got, want); ++bad; }
  }
  ++cases;
  printf("pack %s %s b%d %dx%d strides %ld,%ld,%ld start %ld: %s\n", rows_kernel ? "rows" : "gather", sizeof(T) == 4 ? "f32" : "f16/bf16", batch, rows, cols,
         (long)sb, (long)sr, (long)sc, (long)start, bad ? "FAIL" : "ok");
  if (bad) ++fails;
  fflush(stdout);
}

int main(int argc, char** argv) {
  const bool big = argc > 1 && std::string(argv[1]) == "big";
  // Both weight layouts, aligned (16-byte loads) or not (element loads),
  // one or two 8-row m blocks, clusters of 1, 2 and 4 blocks; K and N edges.
  int shapes[][3] = {{1, 100, 70}, {5, 333, 130}, {16, 72, 64}, {9, 1000, 129}};
  int c = 0;
  for (auto& s : shapes)
    for (int w_k = 0; w_k < 2; ++w_k)
      for (int al = 0; al < 2; ++al, ++c) {
        const int ranks = s[1] >= 300 ? 1 << (c % 3) : 1;
        skinny_case<__nv_bfloat16>(w_k, al, ranks, 1, s[0], s[1], s[2]);
        if (big || c % 3 == 0) skinny_case<__half>(w_k, al, ranks == 1 ? 2 : 1, 1, s[0], s[1], s[2]);
        skinny_case<float>(w_k, al, ranks == 1 ? 2 : ranks, 1, s[0], s[1], s[2]);
      }
  skinny_case<__nv_bfloat16>(true, true, 2, 3, 3, 200, 100);    // batches
  skinny_case<__half>(false, false, 1, 2, 12, 40, 65, true);     // transposed output
  skinny_case<__nv_bfloat16>(false, true, 8, 1, 2, 2048, 64);    // eight blocks per cluster
  skinny_case<__nv_bfloat16>(true, false, 4, 1, 1, 1, 1);        // K = 1: three blocks of the cluster get no K
  skinny_case<float>(true, true, 2, 3, 3, 200, 100);             // float32: batches
  skinny_case<float>(false, false, 1, 2, 12, 40, 65, true);      // transposed output
  skinny_case<float>(false, true, 8, 1, 16, 2048, 64);           // eight blocks per cluster
  skinny_case<float>(true, false, 4, 1, 1, 1, 1);                // K = 1
  // The streaming build, on each ring: both layouts, one and two 8-row m
  // blocks, K and N edges (zero fill), K past the ring's stages (one and two
  // wraps of 16 stages, more of 8), K = 1, batches, several batches per block.
  for (tma_ring = 0; tma_ring < (int)(sizeof(tma_stages) / sizeof(tma_stages[0])); ++tma_ring) {
  skinny_tma_case<__nv_bfloat16>(true, 1, 1, 100, 70, 1);
  skinny_tma_case<__nv_bfloat16>(false, 1, 9, 1100, 130, 1);
  skinny_tma_case<__half>(true, 1, 16, 2100, 64, 1);
  skinny_tma_case<__half>(false, 3, 5, 70, 200, 1, true);
  skinny_tma_case<__nv_bfloat16>(true, 3, 3, 1030, 100, 2);
  skinny_tma_case<__nv_bfloat16>(false, 1, 16, 1, 64, 1);
  // float32: the same, with 32 k per stage (K = 1030: 33 stages, two wraps
  // of the ring) and N-major weights in two boxes of 32 n (N = 130, 200:
  // the second box past N in the last strip).
  skinny_tma_case<float>(true, 1, 1, 100, 70, 1);
  skinny_tma_case<float>(false, 1, 9, 1100, 130, 1);
  skinny_tma_case<float>(true, 1, 16, 2100, 64, 1);
  skinny_tma_case<float>(false, 3, 5, 70, 200, 1, true);
  skinny_tma_case<float>(true, 3, 3, 1030, 100, 2);
  skinny_tma_case<float>(false, 1, 16, 1, 64, 1);
  skinny_tma_case<float>(false, 2, 1, 600, 96, 1);
  // Clusters of 2 and 4 K ranges, reduced through distributed shared memory:
  // ranges of whole stages with a short last one (K = 1100: 2 ranges of 9
  // stages of 64 k or of 18 of 32 k; 4 ranges of 9 stages of 32 k), ranges with
  // no K at all (K = 100 on 4 ranks: 64 and 36 k of 16-bit types, then
  // none), batches, both layouts, M edges.
  skinny_tma_case<__nv_bfloat16>(true, 1, 1, 1100, 130, 1, false, 2);
  skinny_tma_case<__nv_bfloat16>(false, 1, 9, 1100, 70, 1, false, 2);
  skinny_tma_case<__half>(true, 3, 16, 2100, 64, 2, true, 4);
  skinny_tma_case<__nv_bfloat16>(false, 1, 3, 100, 64, 1, false, 4);
  skinny_tma_case<float>(true, 1, 1, 1100, 130, 1, false, 2);
  skinny_tma_case<float>(false, 1, 16, 1100, 96, 1, false, 4);
  skinny_tma_case<float>(true, 2, 5, 100, 64, 1, true, 4);
  // TF32 on the tensor cores (maps rounding to TF32): both layouts, one and
  // two m blocks, K and N edges, K past the ring, batches, clusters.
  skinny_tma_case<float>(true, 1, 1, 100, 70, 1, false, 1, true);
  skinny_tma_case<float>(false, 1, 9, 1100, 130, 1, false, 1, true);
  skinny_tma_case<float>(true, 1, 16, 2100, 64, 1, false, 1, true);
  skinny_tma_case<float>(false, 3, 5, 70, 200, 1, true, 1, true);
  skinny_tma_case<float>(false, 1, 16, 1, 64, 1, false, 1, true);
  skinny_tma_case<float>(true, 1, 1, 1100, 130, 1, false, 2, true);
  skinny_tma_case<float>(false, 1, 16, 1100, 96, 1, false, 4, true);
  // 17 to 32 rows (4 m blocks): 16-bit types and TF32, both layouts, M
  // edges, K past the ring, a cluster, batches, transposed output.
  skinny_tma_case<__nv_bfloat16>(true, 1, 32, 1100, 130, 1);
  skinny_tma_case<__half>(false, 1, 17, 1030, 70, 1, false, 2);
  skinny_tma_case<__nv_bfloat16>(false, 2, 24, 200, 64, 2, true);
  skinny_tma_case<float>(true, 1, 25, 1100, 70, 1, false, 2, true);
  skinny_tma_case<float>(false, 1, 32, 600, 96, 1, false, 1, true);
  // 33 to 64 rows (8 m blocks; rings of 8 and 4 stages): the same.
  skinny_tma_case<__nv_bfloat16>(true, 1, 64, 1100, 130, 1);
  skinny_tma_case<__half>(false, 1, 33, 1030, 70, 1, false, 2);
  skinny_tma_case<__nv_bfloat16>(false, 2, 40, 200, 64, 2, true);
  skinny_tma_case<float>(true, 1, 57, 1100, 70, 1, false, 2, true);
  skinny_tma_case<float>(false, 1, 64, 600, 96, 1, false, 1, true);
  }
  // Staging copies: misaligned rows (odd stride and start), both 16-bit types
  // and float32; a gather from a transposed, strided source.
  pack_case<__nv_bfloat16>(true, 1, 37, 45, 0, 45, 1, 1);
  pack_case<__half>(true, 2, 9, 130, 9 * 131 + 1, 131, 1, 3);
  pack_case<float>(true, 1, 20, 7, 0, 7, 1, 1);
  pack_case<float>(true, 1, 5, 33, 0, 40, 1, 0);
  pack_case<__nv_bfloat16>(false, 2, 40, 50, 4001, 1, 41, 1);
  pack_case<float>(false, 1, 33, 35, 0, 3, 100, 2);
  printf("%d cases, %d failures\n", cases, fails);
  return fails != 0;
}
