// Does a TMA tile load accept a start coordinate that is not a whole number
// of 16 bytes along the innermost dimension? Loads one 64 x 8 bf16 box
// (128-byte swizzle) at x = 0, 1, 8 and 1001 from a [8, 8 * 1001] tensor and
// checks the values. Build: nvcc -arch=sm_90a -o tma_offset tma_offset.cu -lcuda
#include <cuda.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <vector>

__global__ void load(const __grid_constant__ CUtensorMap map, int x, int y, unsigned short* out) {
  __shared__ __align__(1024) unsigned short tile[64 * 8];
  __shared__ __align__(8) unsigned long long bar;
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(tile)), b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b));
    asm volatile("fence.proxy.async.shared::cta;\n");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(1024));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(s),
                 "l"(&map), "r"(x), "r"(y), "r"(b) : "memory");
    uint32_t done = 0;
    while (!done)
      asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(b));
    // Undo the swizzle: chunk c of row r sits at c ^ (r % 8).
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 64; ++c) out[r * 64 + c] = tile[r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8];
  }
}

int main() {
  const int pitch = 1001, rows = 64;
  std::vector<unsigned short> h(rows * pitch);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned short>(i % 65521);
  unsigned short *d, *o;
  cudaMalloc(&d, h.size() * 2);
  cudaMalloc(&o, 64 * 8 * 2);
  cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  CUtensorMap map;
  cuuint64_t dims[2] = {7ull * pitch + 1001, rows / 8}, strides[1] = {8ull * pitch * 2};
  cuuint32_t box[2] = {64, 8}, es[2] = {1, 1};
  CUresult e = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  printf("encode: %d\n", (int)e);
  for (int x : {0, 8, 1, 1001, 3 * 1001 + 960}) {
    load<<<1, 32>>>(map, x, 0, o);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      printf("x = %d: %s\n", x, cudaGetErrorString(err));
      return 1;
    }
    std::vector<unsigned short> r(64 * 8);
    cudaMemcpy(r.data(), o, r.size() * 2, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 8; ++i)
      for (int c = 0; c < 64; ++c) {
        long long src = (long long)i * 8 * pitch + x + c;  // super-row i, element x + c
        unsigned short want = (x + c < (long long)dims[0]) ? h[src] : 0;
        bad += r[i * 64 + c] != want;
      }
    printf("x = %d: %d of 512 wrong\n", x, bad);
  }
  return 0;
}
