// mbarrier and TMA (cp.async.bulk.tensor) wrappers, compute capability 9.0,
// shared by the kernels that stream tiles through a ring of shared-memory
// stages: matmul_sm90a.cu and gemm_skinny.cu's streaming build. Addresses
// are 32-bit shared-memory addresses (`smem_addr`). The CPU emulation
// (tests/matmul_emulation/run.sh) swaps this file for emu_tma.h.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <stdint.h>

namespace myns {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) and the cluster.
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Whether phase `parity` of the barrier has completed (one try; the
// hardware may hold the thread a while first). A phase two ahead of the
// barrier's also reads as complete: callers never wait more than one phase
// ahead.
__device__ __forceinline__ bool mbar_test(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}
// Waits until phase `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_test(bar, parity)) {
  }
}
// As mbar_wait, but the warp leaves the loop together (a vote on each
// try): ptxas takes a branch around wgmmas that read registers, on a
// thread-dependent exit, as divergent, and serializes them.
__device__ __forceinline__ void mbar_wait_warp(uint32_t bar, uint32_t parity) {
  while (!__all_sync(0xffffffffu, mbar_test(bar, parity))) {
  }
}
// A box of `map` at (c0, c1, c2) into shared memory at `dst`, its bytes
// counted on the barrier at `bar`.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

}  // namespace myns
