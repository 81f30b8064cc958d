// Exploration (2026-11-29): how fast can the padded staging copy
// (kernels/gemm_pack.cu `gemm_pack_rows`) go? Times variants of it on the
// unaligned operands of the matmul report (rows of 4095 elements padded to
// 4096; K = 32001 padded to 32064), each after an L2 flush, beside an
// aligned device copy of the same bytes (the roofline a pack can reach).
// Standalone (the GPU machine has nvcc):
//   nvcc -O3 -arch=sm_90a -o pv pack_variants.cu && ./pv [rounds]
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <string>
#include <functional>
#include <cstring>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

struct PackParams {
  const void* src;
  void* dst;
  int64_t batch, rows, cols;
  int64_t sb, sr, sc;
  int64_t ld;
};

// As kernels/gemm_pack.cu `load_shifted` at 183d7cb, split in two so that
// v2 can shift a chunk it did not load itself (a copy, so that this file
// builds alone and times exactly what it measured).
__device__ __forceinline__ uint4 shift_pair(uint4 lo, uint4 hi, int off) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const uint32_t bits = (off & 3) * 8;
  uint32_t o[4];
#define MYNS_SHIFT(W) \
  for (int i = 0; i < 4; ++i) o[i] = __funnelshift_r(w[i + W], w[i + W + 1 < 8 ? i + W + 1 : 7], bits);
  switch (off >> 2) {
    case 0: MYNS_SHIFT(0) break;
    case 1: MYNS_SHIFT(1) break;
    case 2: MYNS_SHIFT(2) break;
    default: MYNS_SHIFT(3) break;
  }
#undef MYNS_SHIFT
  return make_uint4(o[0], o[1], o[2], o[3]);
}
__device__ __forceinline__ uint4 mask_bytes(uint4 v, int nbytes) {
  uint32_t o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int keep = nbytes - 4 * i;
    if (keep <= 0) o[i] = 0;
    else if (keep < 4) o[i] &= (1u << (8 * keep)) - 1u;
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}
__device__ __forceinline__ uint4 load_shifted(const unsigned char* p, int nbytes) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const int off = static_cast<int>(addr & 15);
  const uint4* base = reinterpret_cast<const uint4*>(addr - off);
  const uint4 lo = __ldg(base);
  const uint4 hi = off + nbytes > 16 ? __ldg(base + 1) : make_uint4(0, 0, 0, 0);
  return mask_bytes(shift_pair(lo, hi, off), nbytes);
}

// v0: today's kernel (one chunk of one row per thread; grid (ld/8/256, rows)).
template <typename T>
__global__ void __launch_bounds__(256) pack_v0(const PackParams p) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t chunks = (p.cols + VEC - 1) / VEC, total_rows = p.batch * p.rows;
  const int64_t ci = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (ci * VEC >= p.ld) return;
  for (int64_t zr = blockIdx.y; zr < total_rows; zr += gridDim.y) {
    const int64_t z = zr / p.rows, r = zr - z * p.rows;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (ci < chunks) {
      const int64_t c = ci * VEC;
      const int n = static_cast<int>(min(p.cols - c, (int64_t)VEC));
      const T* src = static_cast<const T*>(p.src) + z * p.sb + r * p.sr + c;
      v = load_shifted(reinterpret_cast<const unsigned char*>(src), n * static_cast<int>(sizeof(T)));
    }
    *reinterpret_cast<uint4*>(static_cast<T*>(p.dst) + zr * p.ld + ci * VEC) = v;
  }
}

// v1: R rows per thread per step, every load issued before any store.
template <typename T, int R>
__global__ void __launch_bounds__(256) pack_v1(const PackParams p) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t chunks = (p.cols + VEC - 1) / VEC, total_rows = p.batch * p.rows;
  const int64_t ci = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (ci * VEC >= p.ld) return;
  const int64_t c = ci * VEC;
  const int n = static_cast<int>(min(p.cols - c, (int64_t)VEC)) * static_cast<int>(sizeof(T));
  for (int64_t zr0 = blockIdx.y * (int64_t)R; zr0 < total_rows; zr0 += gridDim.y * (int64_t)R) {
    uint4 v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int64_t zr = zr0 + i;
      v[i] = make_uint4(0, 0, 0, 0);
      if (zr < total_rows && ci < chunks) {
        const int64_t z = zr / p.rows, r = zr - z * p.rows;
        const T* src = static_cast<const T*>(p.src) + z * p.sb + r * p.sr + c;
        v[i] = load_shifted(reinterpret_cast<const unsigned char*>(src), n);
      }
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (zr0 + i < total_rows) *reinterpret_cast<uint4*>(static_cast<T*>(p.dst) + (zr0 + i) * p.ld + c) = v[i];
  }
}

// v2: as v1, the next chunk from the neighbouring lane (one load per chunk).
template <typename T, int R>
__global__ void __launch_bounds__(256) pack_v2(const PackParams p) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t chunks = (p.cols + VEC - 1) / VEC, total_rows = p.batch * p.rows;
  const int64_t ci = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const bool live = ci * VEC < p.ld;
  const int lane = threadIdx.x % 32;
  const int64_t c = ci * VEC;
  const int n = live && ci < chunks ? static_cast<int>(min(p.cols - c, (int64_t)VEC)) * static_cast<int>(sizeof(T)) : 0;
  for (int64_t zr0 = blockIdx.y * (int64_t)R; zr0 < total_rows; zr0 += gridDim.y * (int64_t)R) {
    uint4 lo[R], hi[R];
    int off[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int64_t zr = zr0 + i;
      lo[i] = make_uint4(0, 0, 0, 0);
      hi[i] = make_uint4(0, 0, 0, 0);
      off[i] = 0;
      if (zr < total_rows && n > 0) {
        const int64_t z = zr / p.rows, r = zr - z * p.rows;
        const uintptr_t addr = reinterpret_cast<uintptr_t>(static_cast<const T*>(p.src) + z * p.sb + r * p.sr + c);
        off[i] = static_cast<int>(addr & 15);
        const uint4* base = reinterpret_cast<const uint4*>(addr - off[i]);
        lo[i] = __ldg(base);
        // The last lane (or the last chunk) has no neighbour holding its next chunk.
        if ((lane == 31 || ci + 1 >= chunks) && off[i] + n > 16) hi[i] = __ldg(base + 1);
      }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      uint4 nb;
      nb.x = __shfl_down_sync(0xffffffffu, lo[i].x, 1);
      nb.y = __shfl_down_sync(0xffffffffu, lo[i].y, 1);
      nb.z = __shfl_down_sync(0xffffffffu, lo[i].z, 1);
      nb.w = __shfl_down_sync(0xffffffffu, lo[i].w, 1);
      if (!(lane == 31 || ci + 1 >= chunks)) hi[i] = nb;
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (live && zr0 + i < total_rows)
        *reinterpret_cast<uint4*>(static_cast<T*>(p.dst) + (zr0 + i) * p.ld + c) = n > 0 ? mask_bytes(shift_pair(lo[i], hi[i], off[i]), n) : make_uint4(0, 0, 0, 0);
  }
}

// Roofline: an aligned copy of the same bytes, 4 chunks per thread per step.
__global__ void __launch_bounds__(256) copy_ref(const uint4* __restrict__ s, uint4* __restrict__ d, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = __ldg(s + i), b = __ldg(s + i + stride), c = __ldg(s + i + 2 * stride), e = __ldg(s + i + 3 * stride);
    d[i] = a; d[i + stride] = b; d[i + 2 * stride] = c; d[i + 3 * stride] = e;
  }
  for (; i < n; i += stride) d[i] = __ldg(s + i);
}

struct Case { const char* name; int elem; int64_t rows, cols, ld; };

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3, reps = 20;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const Case cases[] = {
      {"bf16 4096 x 4095 -> 4096", 2, 4096, 4095, 4096},
      {"f32 4096 x 4095 -> 4096", 4, 4096, 4095, 4096},
      {"bf16 2048 x 32001 -> 32064", 2, 2048, 32001, 32064},
      {"bf16 1024 x 1023 -> 1024", 2, 1024, 1023, 1024},
  };
  size_t maxb = 0;
  for (auto& c : cases) maxb = std::max(maxb, (size_t)(c.rows * c.ld * c.elem + 64));
  void *src, *dst, *flush;
  CK(cudaMalloc(&src, maxb)); CK(cudaMalloc(&dst, maxb)); CK(cudaMalloc(&flush, 256 << 20));
  CK(cudaMemset(src, 0x5a, maxb));
  std::vector<char> want(maxb), got(maxb);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (auto& cs : cases) {
    // Random source bytes; the reference is v0's output.
    std::vector<uint32_t> h(maxb / 4); uint32_t x = 12345;
    for (auto& w : h) { x = x * 1664525u + 1013904223u; w = x; }
    CK(cudaMemcpy(src, h.data(), maxb, cudaMemcpyHostToDevice));
    PackParams p{(char*)src + 2, dst, 1, cs.rows, cs.cols, 0, cs.cols, 1, cs.ld};  // start off 16 bytes, as a sliced operand's may be
    const int vec = 16 / cs.elem;
    const int64_t bytes = cs.rows * (cs.cols + cs.ld) * cs.elem;
    struct V { std::string name; std::function<void()> f; };
    std::vector<std::pair<std::string, void (*)(const PackParams&, int, int)>> dummy;
    auto gx = (unsigned)((cs.ld / vec + 255) / 256);
    std::vector<std::pair<std::string, std::function<void()>>> vs;
#define BOTH(KER, ...) (cs.elem == 2 ? (void*)KER<__nv_bfloat16 __VA_ARGS__> : (void*)KER<float __VA_ARGS__>)
    auto launch = [&](void* k, dim3 g) { void* args[] = {&p}; CK(cudaLaunchKernel(k, g, dim3(256), args, 0, 0)); };
    vs.push_back({"v0 (today)", [&] { launch(BOTH(pack_v0), dim3(gx, (unsigned)std::min<int64_t>(cs.rows, 65535))); }});
    vs.push_back({"v1 R2", [&] { launch(BOTH(pack_v1, , 2), dim3(gx, (unsigned)((cs.rows + 1) / 2))); }});
    vs.push_back({"v1 R4", [&] { launch(BOTH(pack_v1, , 4), dim3(gx, (unsigned)((cs.rows + 3) / 4))); }});
    vs.push_back({"v1 R8", [&] { launch(BOTH(pack_v1, , 8), dim3(gx, (unsigned)((cs.rows + 7) / 8))); }});
    vs.push_back({"v1 R4 grid 4/SM", [&] { launch(BOTH(pack_v1, , 4), dim3(gx, (unsigned)std::max<int64_t>(1, std::min<int64_t>((cs.rows + 3) / 4, 4 * sms / gx)))); }});
    vs.push_back({"v2 R2", [&] { launch(BOTH(pack_v2, , 2), dim3(gx, (unsigned)((cs.rows + 1) / 2))); }});
    vs.push_back({"v2 R4", [&] { launch(BOTH(pack_v2, , 4), dim3(gx, (unsigned)((cs.rows + 3) / 4))); }});
    vs.push_back({"v2 R8", [&] { launch(BOTH(pack_v2, , 8), dim3(gx, (unsigned)((cs.rows + 7) / 8))); }});
    const int64_t n16 = bytes / 2 / 16;
    vs.push_back({"aligned copy (roofline)", [&] { copy_ref<<<sms * 8, 256>>>((const uint4*)src, (uint4*)dst, n16); }});
    vs.push_back({"cudaMemcpyAsync", [&] { CK(cudaMemcpyAsync(dst, src, n16 * 16, cudaMemcpyDeviceToDevice, 0)); }});
    // Correctness against v0.
    CK(cudaMemset(dst, 0xff, maxb)); vs[0].second(); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(want.data(), dst, cs.rows * cs.ld * cs.elem, cudaMemcpyDeviceToHost));
    for (size_t v = 1; v + 2 < vs.size(); ++v) {
      CK(cudaMemset(dst, 0xff, maxb)); vs[v].second(); CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(got.data(), dst, cs.rows * cs.ld * cs.elem, cudaMemcpyDeviceToHost));
      if (memcmp(want.data(), got.data(), cs.rows * cs.ld * cs.elem)) printf("  MISMATCH %s\n", vs[v].first.c_str());
    }
    std::vector<std::vector<float>> t(vs.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t v = 0; v < vs.size(); ++v)
        for (int i = 0; i < reps; ++i) {
          CK(cudaMemsetAsync(flush, i, 256 << 20, 0));
          CK(cudaEventRecord(e0)); vs[v].second(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
          float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t[v].push_back(ms * 1000);
        }
    printf("%s: %.1f MB read + written\n", cs.name, bytes / 1e6);
    for (size_t v = 0; v < vs.size(); ++v) {
      auto& a = t[v]; std::sort(a.begin(), a.end()); float med = a[a.size() / 2];
      printf("  %-26s %8.2f us  %6.2f TB/s\n", vs[v].first.c_str(), med, bytes / med / 1e6);
    }
  }
  return 0;
}
