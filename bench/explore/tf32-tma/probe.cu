// What does a TMA load do to float32 data when the tensor map's element
// type is TFLOAT32 (or TFLOAT32_FTZ)? One 32 x 32 box per block, loaded
// into shared memory and written back out unchanged. Built for sm_90a by
// run.sh; launched by probe.py through the driver API.
#include <cuda.h>
#include <stdint.h>

extern "C" __global__ void tma_roundtrip(const __grid_constant__ CUtensorMap tm, float* out) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t t = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(32 * 32 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(t),
                 "l"(reinterpret_cast<uint64_t>(&tm)), "r"(b), "r"(0), "r"(static_cast<int>(blockIdx.x) * 32)
                 : "memory");
  }
  uint32_t done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(b), "r"(0) : "memory");
  } while (!done);
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) out[blockIdx.x * 1024 + i] = tile[i];
}
