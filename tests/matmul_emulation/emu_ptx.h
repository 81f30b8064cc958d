// Emulated PTX wrappers (replace the asm section of matmul_common.cuh), after
// the PTX ISA's fragment layouts.
struct EmuCopy { void* dst; const void* src; int bytes; int group; int size; };
struct EmuAsync { std::vector<EmuCopy> q; int group = 0; };
inline EmuAsync emu_async[1024];
inline EmuAsync& my_async() { return emu_async[emu::cur->tid.x]; }

__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  if (src_bytes < 0 || src_bytes > 16) { fprintf(stderr, "bad src_bytes %d\n", src_bytes); abort(); }
  if (((uintptr_t)dst) % 16) { fprintf(stderr, "misaligned cp.async dst\n"); abort(); }
  if (src_bytes > 0 && ((uintptr_t)src) % 16) { fprintf(stderr, "misaligned cp.async src %p bytes %d\n", src, src_bytes); abort(); }
  my_async().q.push_back({dst, src, src_bytes, my_async().group, 16});
}
// The 4-byte form (cp.async.ca ... 4, src_bytes 0 or 4).
__device__ __forceinline__ void cp_async4(void* dst, const void* src, int src_bytes) {
  if (src_bytes != 0 && src_bytes != 4) { fprintf(stderr, "bad src_bytes %d\n", src_bytes); abort(); }
  if (((uintptr_t)dst) % 4 || (src_bytes > 0 && ((uintptr_t)src) % 4)) { fprintf(stderr, "misaligned cp.async 4\n"); abort(); }
  my_async().q.push_back({dst, src, src_bytes, my_async().group, 4});
}
__device__ __forceinline__ void cp_async_commit() { my_async().group++; }
// Copies land late: only when a wait makes them due (oldest groups first).
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  auto& a = my_async();
  int due_below = a.group - N;  // groups < due_below must be complete
  std::vector<EmuCopy> keep;
  for (auto& c : a.q) {
    if (c.group < due_below) {
      unsigned char tmp[16] = {0};
      if (c.bytes) memcpy(tmp, c.src, c.bytes);
      memcpy(c.dst, tmp, c.size);
    } else keep.push_back(c);
  }
  a.q.swap(keep);
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  int w = emu::warp(), l = emu::lane();
  if (((uintptr_t)p) % 16) { fprintf(stderr, "misaligned ldmatrix row\n"); abort(); }
  emu::slot_ptr[w][l] = p;
  emu::syncwarp();
  for (int i = 0; i < 4; ++i) {
    const uint16_t* row = (const uint16_t*)emu::slot_ptr[w][i * 8 + l / 4];
    r[i] = row[2 * (l % 4)] | (uint32_t)row[2 * (l % 4) + 1] << 16;
  }
  emu::syncwarp();
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  int w = emu::warp(), l = emu::lane();
  if (((uintptr_t)p) % 16) { fprintf(stderr, "misaligned ldmatrix row\n"); abort(); }
  emu::slot_ptr[w][l] = p;
  emu::syncwarp();
  for (int i = 0; i < 4; ++i) {
    const uint16_t* r0 = (const uint16_t*)emu::slot_ptr[w][i * 8 + 2 * (l % 4)];
    const uint16_t* r1 = (const uint16_t*)emu::slot_ptr[w][i * 8 + 2 * (l % 4) + 1];
    r[i] = r0[l / 4] | (uint32_t)r1[l / 4] << 16;
  }
  emu::syncwarp();
}

inline float emu_h2f(uint16_t x, int kind) {
  if (kind == 0) { __half h; memcpy(&h, &x, 2); return __half2float(h); }
  __nv_bfloat16 b; memcpy(&b, &x, 2); return __bfloat162float(b);
}

// kind 0: f16, 1: bf16 (m16n8k16); 2: tf32 (m16n8k8)
inline void emu_mma(int kind, float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  int w = emu::warp(), l = emu::lane();
  for (int i = 0; i < 4; ++i) emu::slot_u[w][l][i] = a[i];
  for (int i = 0; i < 2; ++i) emu::slot_u[w][l][4 + i] = b[i];
  for (int i = 0; i < 4; ++i) memcpy(&emu::slot_u[w][l][6 + i], &d[i], 4);
  emu::syncwarp();
  float A[16][16] = {}, B[16][8] = {}, C[16][8] = {};
  int K = kind == 2 ? 8 : 16;
  for (int ln = 0; ln < 32; ++ln) {
    int g = ln / 4, t = ln % 4;
    const uint32_t* s = emu::slot_u[w][ln];
    if (kind == 2) {
      auto f = [&](uint32_t u) { float x; memcpy(&x, &u, 4); return x; };
      A[g][t] = f(s[0]); A[g + 8][t] = f(s[1]); A[g][t + 4] = f(s[2]); A[g + 8][t + 4] = f(s[3]);
      B[t][g] = f(s[4]); B[t + 4][g] = f(s[5]);
    } else {
      auto lo = [&](uint32_t u) { return emu_h2f(u & 0xffff, kind); };
      auto hi = [&](uint32_t u) { return emu_h2f(u >> 16, kind); };
      A[g][2 * t] = lo(s[0]); A[g][2 * t + 1] = hi(s[0]);
      A[g + 8][2 * t] = lo(s[1]); A[g + 8][2 * t + 1] = hi(s[1]);
      A[g][2 * t + 8] = lo(s[2]); A[g][2 * t + 9] = hi(s[2]);
      A[g + 8][2 * t + 8] = lo(s[3]); A[g + 8][2 * t + 9] = hi(s[3]);
      B[2 * t][g] = lo(s[4]); B[2 * t + 1][g] = hi(s[4]);
      B[2 * t + 8][g] = lo(s[5]); B[2 * t + 9][g] = hi(s[5]);
    }
    float c[4]; memcpy(c, &s[6], 16);
    C[g][2 * t] = c[0]; C[g][2 * t + 1] = c[1]; C[g + 8][2 * t] = c[2]; C[g + 8][2 * t + 1] = c[3];
  }
  int g = l / 4, t = l % 4;
  auto D = [&](int r, int c) { double s = C[r][c]; for (int k = 0; k < K; ++k) s += (double)A[r][k] * B[k][c]; return (float)s; };
  float out[4] = {D(g, 2 * t), D(g, 2 * t + 1), D(g + 8, 2 * t), D(g + 8, 2 * t + 1)};
  emu::syncwarp();
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}

// mma.sync m16n8k8 .f64: the tf32 fragment places, in doubles.
inline double emu_slot_d[64][32][10];
struct Dmma {
  static constexpr int K = 8;
  static void run(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
    int w = emu::warp(), l = emu::lane();
    double* s = emu_slot_d[w][l];
    for (int i = 0; i < 4; ++i) s[i] = a[i];
    for (int i = 0; i < 2; ++i) s[4 + i] = b[i];
    for (int i = 0; i < 4; ++i) s[6 + i] = d[i];
    emu::syncwarp();
    double A[16][8] = {}, B[8][8] = {}, C[16][8] = {};
    for (int ln = 0; ln < 32; ++ln) {
      int g = ln / 4, t = ln % 4;
      const double* x = emu_slot_d[w][ln];
      A[g][t] = x[0]; A[g + 8][t] = x[1]; A[g][t + 4] = x[2]; A[g + 8][t + 4] = x[3];
      B[t][g] = x[4]; B[t + 4][g] = x[5];
      C[g][2 * t] = x[6]; C[g][2 * t + 1] = x[7]; C[g + 8][2 * t] = x[8]; C[g + 8][2 * t + 1] = x[9];
    }
    int g = l / 4, t = l % 4;
    auto D = [&](int r, int c) { double v = C[r][c]; for (int k = 0; k < 8; ++k) v += A[r][k] * B[k][c]; return v; };
    double out[4] = {D(g, 2 * t), D(g, 2 * t + 1), D(g + 8, 2 * t), D(g + 8, 2 * t + 1)};
    emu::syncwarp();
    for (int i = 0; i < 4; ++i) d[i] = out[i];
  }
};

template <typename T> struct Mma;
template <> struct Mma<__half> { static constexpr int K = 16; static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { emu_mma(0, d, a, b); } };
template <> struct Mma<__nv_bfloat16> { static constexpr int K = 16; static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { emu_mma(1, d, a, b); } };
template <> struct Mma<float> { static constexpr int K = 8; static void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { emu_mma(2, d, a, b); } };

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t u; memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;  // to nearest, ties to even
  else if (u & 0x7FFFFFu) u = 0x7FFFE000u;
  return u;
}
