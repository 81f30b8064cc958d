// Runs the real kernels/matmul_tc.cu and matmul_simt.cu code on the CPU under
// the fiber emulation and checks every variant against a double reference.
#include "emu_prelude.h"
namespace myns {
alignas(1024) unsigned char smem_raw[240 * 1024];
alignas(16) float smem_f[64 * 1024];
}
#include "matmul_tc.cu"
#include "matmul_simt.cu"
#include <random>
#include <string>
#include <functional>

using Kern = void (*)(const GemmParams);
static Kern g_kern;
static GemmParams g_p;
static void fiber_main() { g_kern(g_p); emu::cur->done = true; }

static void launch(Kern k, unsigned gx, unsigned gz, int threads, const GemmParams& p, size_t smem_bytes) {
  emu::grid_dim = {gx, 1, gz};
  emu::block_dim = {(unsigned)threads, 1, 1};
  emu::nthreads = threads;
  g_kern = k; g_p = p;
  std::vector<emu::Fiber> fibers(threads);
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned x = 0; x < gx; ++x) {
      emu::block_idx = {x, 0, z};
      memset(myns::smem_raw, 0xFF, sizeof myns::smem_raw);  // NaN-ish garbage
      memset(myns::smem_f, 0xFF, sizeof myns::smem_f);
      emu::bar_count = 0;
      memset(emu::warp_count, 0, sizeof emu::warp_count);
      for (int t = 0; t < threads; ++t) {
        auto& f = fibers[t];
        f.done = false; f.tid = {(unsigned)t, 0, 0}; f.bid = emu::block_idx; f.slot = 0;
        f.stack.resize(256 * 1024);
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data(); f.ctx.uc_stack.ss_size = f.stack.size();
        f.ctx.uc_link = &emu::sched;
        makecontext(&f.ctx, fiber_main, 0);
        myns::emu_async[t] = {};
      }
      bool all = false;
      while (!all) {
        all = true;
        for (auto& f : fibers) {
          if (f.done) continue;
          all = false;
          emu::cur = &f;
          swapcontext(&emu::sched, &f.ctx);
        }
      }
      (void)smem_bytes;
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

struct Cfg { const char* name; int bm, bn, bk, threads; };
static int failures = 0, cases = 0;

// One problem: batch x (M x K) @ (K x N); a_k: a K-contiguous; b_k: b K-contiguous.
template <class T>
void run_case(const std::string& tag, Kern* table, const Cfg& c, bool simt, int batch, int M, int K, int N, bool a_k, bool b_k,
              int splits_req, bool swap_out, double u_in, double u_out, double u_acc = 6e-8) {
  std::mt19937 rng(M * 131 + K * 7 + N + batch);
  std::normal_distribution<float> nd;
  const int VEC = 16 / sizeof(T);
  auto rup = [&](int x) { return (x + VEC - 1) / VEC * VEC; };
  // a: [batch][M][K] as (sam, sak); stored padded.
  int64_t sam, sak, sbk, sbn, sab, sbb;
  std::vector<T> A, B;
  if (a_k) { sak = 1; sam = rup(K); sab = (int64_t)M * sam; } else { sam = 1; sak = rup(M); sab = (int64_t)K * sak; }
  if (b_k) { sbk = 1; sbn = rup(K); sbb = (int64_t)N * sbn; } else { sbn = 1; sbk = rup(N); sbb = (int64_t)K * sbk; }
  A.resize(batch * sab + 64); B.resize(batch * sbb + 64);
  for (auto& x : A) x = fromf<T>(nd(rng));
  for (auto& x : B) x = fromf<T>(nd(rng));
  std::vector<T> C((size_t)batch * M * N);
  for (auto& x : C) x = fromf<T>(NAN);
  GemmParams p{};
  p.a = A.data(); p.b = B.data(); p.c = C.data();
  p.M = M; p.N = N; p.K = K; p.sam = sam; p.sak = sak; p.sbk = sbk; p.sbn = sbn;
  p.scm = N; p.scn = 1; p.sab = sab; p.sbb = sbb; p.scb = (int64_t)M * N; p.batch = batch;
  bool kk_a = a_k, kk_b = b_k;
  if (swap_out) {  // c^T = b^T a^T, as src/ops/matmul.rs does for skinny N
    std::swap(p.a, p.b); std::swap(p.M, p.N);
    p.sam = sbn; p.sak = sbk; p.sbk = sak; p.sbn = sam; std::swap(p.sab, p.sbb);
    p.scm = 1; p.scn = N; std::swap(kk_a, kk_b);
  }
  // split_k as in src/ops/matmul.rs
  int64_t s = std::max<int64_t>(1, std::min<int64_t>(splits_req, std::max(K, 1)));
  int64_t chunk = ((K + s - 1) / s + c.bk - 1) / c.bk * c.bk; if (chunk < c.bk) chunk = c.bk;
  p.splits = (K + chunk - 1) / chunk; if (p.splits < 1) p.splits = 1; p.k_chunk = chunk;
  std::vector<float> ws;
  if (p.splits > 1) { ws.assign((size_t)batch * p.splits * p.M * p.N, NAN); p.ws = ws.data(); }
  if (getenv("VERBOSE")) { fprintf(stderr, "case %s %s b%d %dx%dx%d %s%s s%d%s\n", tag.c_str(), c.name, batch, M, K, N, a_k ? "k" : "m", b_k ? "k" : "n", (int)p.splits, swap_out ? " swapped" : ""); }
  unsigned gx = (unsigned)(((p.M + c.bm - 1) / c.bm) * ((p.N + c.bn - 1) / c.bn));
  Kern kern = table[(!kk_a) * 2 + (!kk_b)];
  launch(kern, gx, (unsigned)(batch * p.splits), c.threads, p, 0);
  if (p.splits > 1) {
    Kern red = std::is_same<T, float>::value ? (Kern)mm_splitk_reduce_f32 : std::is_same<T, __half>::value ? (Kern)mm_splitk_reduce_f16 : (Kern)mm_splitk_reduce_bf16;
    launch(red, 4, 1, 256, p, 0);
  }
  (void)kk_a; (void)kk_b;
  // check
  int bad = 0; double num = 0, den = 0;
  for (int bz = 0; bz < batch; ++bz)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double ref = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
          double x = tof(A[bz * sab + i * sam + k * sak]), y = tof(B[bz * sbb + k * sbk + j * sbn]);
          ref += x * y; mag += fabs(x * y);
        }
        double out = tof(C[(size_t)bz * M * N + (size_t)i * N + j]);
        // Split partials are float32 (rounded, then summed in float32) whatever the accumulation.
        double acc_term = p.splits > 1 ? 2 * std::max<double>(K * u_acc, p.splits * 6e-8) : 2 * K * u_acc;
        double bound = mag * (2 * u_in + acc_term) + fabs(ref) * u_out * 1.01 + 1e-30;
        if (!(fabs(out - ref) <= bound)) { if (bad < 3) fprintf(stderr, "  [%d,%d,%d] out %g ref %g\n", bz, i, j, out, ref); ++bad; }
        num += (out - ref) * (out - ref); den += ref * ref;
      }
  ++cases;
  if (bad) { ++failures; printf("FAIL %s %s b%d %dx%dx%d %s%s s%d%s: %d bad, rel %.2e\n", tag.c_str(), c.name, batch, M, K, N, a_k ? "k" : "m", b_k ? "k" : "n", (int)p.splits, swap_out ? " swapped" : "", bad, sqrt(num / den)); }
}

#define TCK(dt, cfg) {mm_tc_##dt##_##cfg##_kk, mm_tc_##dt##_##cfg##_kn, mm_tc_##dt##_##cfg##_mk, mm_tc_##dt##_##cfg##_mn}

int main(int argc, char** argv) {
  std::vector<std::tuple<int, int, int, int>> shapes = {{1, 1, 1, 1}, {1, 37, 40, 45}, {1, 129, 72, 130}, {2, 17, 100, 33}, {1, 16, 200, 136}};
  if (argc > 1 && std::string(argv[1]) == "big") shapes = {{1, 130, 300, 260}};  // multi-tile, K not a multiple of any k-tile
  Cfg half_cfgs[] = {{"256", 128, 256, 32, 256}, {"128", 128, 128, 32, 128}, {"64", 64, 64, 32, 128}, {"16", 16, 128, 64, 128}};
  Cfg tf32_cfgs[] = {{"256", 128, 256, 16, 256}, {"128", 128, 128, 16, 128}, {"64", 64, 64, 16, 128}, {"16", 16, 128, 32, 128}};
  Cfg simt_cfgs[] = {{"256", 256, 128, 16, 256}, {"128", 128, 128, 16, 256}, {"64", 64, 64, 16, 64}, {"16", 16, 128, 32, 128}};
  Kern f16[4][4] = {TCK(f16, 256), TCK(f16, 128), TCK(f16, 64), TCK(f16, 16)};
  Kern bf16[4][4] = {TCK(bf16, 256), TCK(bf16, 128), TCK(bf16, 64), TCK(bf16, 16)};
  Kern tf32[4][4] = {TCK(tf32, 256), TCK(tf32, 128), TCK(tf32, 64), TCK(tf32, 16)};
  // float32 on the FP64 tensor cores: exact products, float64 sums, one final rounding.
  Cfg x64_cfg = {"x128", 128, 128, 32, 256};
  Kern x64[4] = TCK(f32x, x128);
  Kern simt[4][4] = {{mm_simt_f32_256_kk, mm_simt_f32_256_kn, mm_simt_f32_256_mk, mm_simt_f32_256_mn},
                     {mm_simt_f32_128_kk, mm_simt_f32_128_kn, mm_simt_f32_128_mk, mm_simt_f32_128_mn},
                     {mm_simt_f32_64_kk, mm_simt_f32_64_kn, mm_simt_f32_64_mk, mm_simt_f32_64_mn},
                     {mm_simt_f32_16_kk, mm_simt_f32_16_kn, mm_simt_f32_16_mk, mm_simt_f32_16_mn}};
  std::string only = argc > 2 ? argv[2] : "";
  const bool small = !(argc > 1 && std::string(argv[1]) == "big");
  for (auto [bs, M, K, N] : shapes)
    for (int lay = 0; lay < 4; ++lay) {
      bool a_k = lay < 2, b_k = lay % 2 == 0;
      // small: the multi-tile shape in two layouts only (the rest cover the others).
      if (small && M > 100 && lay % 3 != 0) continue;
      for (int splits : {1, 3}) {
        for (bool sw : {false, true}) {
          if (sw && splits == 3) continue;
          // small: split-K and the swapped output in alternate layouts.
          if (small && (splits != 1 || sw) && (lay + splits + sw) % 2) continue;
          for (int ci = 0; ci < 4; ++ci) {
            if (only.empty() || only == "f16") run_case<__half>("f16", f16[ci], half_cfgs[ci], false, bs, M, K, N, a_k, b_k, splits, sw, 0, 1.0 / 2048);
            if (only.empty() || only == "bf16") run_case<__nv_bfloat16>("bf16", bf16[ci], half_cfgs[ci], false, bs, M, K, N, a_k, b_k, splits, sw, 0, 1.0 / 256);
            if (only.empty() || only == "tf32") run_case<float>("tf32", tf32[ci], tf32_cfgs[ci], false, bs, M, K, N, a_k, b_k, splits, sw, 1.0 / 2048, 6e-8);
          }
          for (int ci = 0; ci < 4; ++ci)
            if (only.empty() || only == "f32") run_case<float>("f32", simt[ci], simt_cfgs[ci], true, bs, M, K, N, a_k, b_k, splits, sw, 0, 6e-8);
          if (only.empty() || only == "f32") run_case<float>("f32x", x64, x64_cfg, false, bs, M, K, N, a_k, b_k, splits, sw, 0, 6e-8, 1.2e-16);
        }
      }
      printf("shape %dx%dx%dx%d layout %d done (%d cases, %d failures)\n", bs, M, K, N, lay, cases, failures);
      fflush(stdout);
    }
  printf("%d cases, %d failures\n", cases, failures);
  return failures != 0;
}
