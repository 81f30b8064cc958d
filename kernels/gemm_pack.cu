// Staging copies for GEMM operands that the fast kernels cannot read in
// place (src/gemm/pack.rs decides when): rows whose stride, start or batch
// stride is not a multiple of 16 bytes (TMA and 16-byte loads need that),
// layouts that are neither K- nor MN-contiguous, and float32 operands the
// Hopper TF32 kernels need K-major.
//
// Source element (z, r, c) at src + z * sb + r * sr + c * sc; destination
// (z, r, c) at dst + (z * rows + r) * ld + c, `ld` a whole number of 16-byte
// chunks; columns [cols, ld) of the destination are written as zeros.
//
//   gemm_pack_rows_<dt>(PackParams)    sc == 1: 16-byte chunks, the source read
//                                      through aligned 16-byte loads and shifted
//   gemm_pack_gather_<dt>(PackParams)  any strides: 32 x 32 tiles through shared
//                                      memory, read along the source's unit stride
#include "common.cuh"

namespace myns {
namespace pack {

struct PackParams {
  const void* src;
  void* dst;
  int64_t batch, rows, cols;
  int64_t sb, sr, sc;
  int64_t ld;
};

// ---- PTX (replaced by tests/matmul_emulation/emu_pack.h)
// Lets the stream's next kernel (the product, launched as a programmatic
// dependent) start its blocks' set-up now; it still waits for this whole
// kernel before it reads the copy.
__device__ __forceinline__ void start_dependents() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
// ---- end PTX

// `nbytes` (1..16) bytes starting at `p` as one 16-byte value, zeros after
// them. Reads only the aligned 16-byte chunks that hold a wanted byte (so
// never past the allocation) and shifts them into place.
__device__ __forceinline__ uint4 load_shifted(const unsigned char* p, int nbytes) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const int off = static_cast<int>(addr & 15);
  const uint4* base = reinterpret_cast<const uint4*>(addr - off);
  const uint4 lo = __ldg(base);
  const uint4 hi = off + nbytes > 16 ? __ldg(base + 1) : make_uint4(0, 0, 0, 0);
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const uint32_t bits = (off & 3) * 8;
  uint32_t o[4];
  // Constant indices per case keep `w` in registers.
#define MYNS_SHIFT(W) \
  for (int i = 0; i < 4; ++i) o[i] = __funnelshift_r(w[i + W], w[i + W + 1 < 8 ? i + W + 1 : 7], bits);
  switch (off >> 2) {
    case 0: MYNS_SHIFT(0) break;
    case 1: MYNS_SHIFT(1) break;
    case 2: MYNS_SHIFT(2) break;
    default: MYNS_SHIFT(3) break;
  }
#undef MYNS_SHIFT
  // Zero the bytes past `nbytes` (whole elements: nbytes is a multiple of the element size).
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int keep = nbytes - 4 * i;
    if (keep <= 0) o[i] = 0;
    else if (keep < 4) o[i] &= (1u << (8 * keep)) - 1u;
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

template <typename T>
__device__ __forceinline__ void pack_rows(const PackParams& p) {
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

// 32 x 32 tiles through shared memory with 32 x 8 threads: reads run along
// whichever of c and r has unit stride in the source, writes along c.
template <typename T>
__device__ __forceinline__ void pack_gather(const PackParams& p) {
  __shared__ T tile[32][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool along_c = p.sc == 1 || p.sr != 1;
  const int64_t r0 = (int64_t)blockIdx.x * 32, c_tiles = (p.ld + 31) / 32;
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const T* src = static_cast<const T*>(p.src) + z * p.sb;
    T* dst = static_cast<T*>(p.dst) + z * p.rows * p.ld;
    for (int64_t ct = blockIdx.y; ct < c_tiles; ct += gridDim.y) {
      const int64_t c0 = ct * 32;
      for (int i = ty; i < 32; i += 8) {
        const int rr = along_c ? i : tx, cc = along_c ? tx : i;
        T v = T(0.f);
        if (r0 + rr < p.rows && c0 + cc < p.cols) v = src[(r0 + rr) * p.sr + (c0 + cc) * p.sc];
        tile[rr][cc] = v;
      }
      __syncthreads();
      for (int i = ty; i < 32; i += 8)
        if (r0 + i < p.rows && c0 + tx < p.ld) dst[(r0 + i) * p.ld + c0 + tx] = tile[i][tx];
      __syncthreads();
    }
  }
}

}  // namespace pack
}  // namespace myns

using myns::pack::PackParams;

#define MYNS_PACK(suffix, T)                                                                                        \
  extern "C" __global__ void __launch_bounds__(256) gemm_pack_rows_##suffix(const PackParams p) {                   \
    myns::pack::start_dependents();                                                                                 \
    myns::pack::pack_rows<T>(p);                                                                                    \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(256) gemm_pack_gather_##suffix(const PackParams p) {                 \
    myns::pack::start_dependents();                                                                                 \
    myns::pack::pack_gather<T>(p);                                                                                  \
  }
MYNS_PACK(f32, float)
MYNS_PACK(f16, __half)
MYNS_PACK(bf16, __nv_bfloat16)
