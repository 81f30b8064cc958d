// Emulated pieces of kernels/gemm_skinny.cu (its PTX section): thread-block
// clusters run their blocks together as one set of fibers, each block with
// its own shared memory; cluster_sync is a barrier over all of them;
// ld_cluster reads another block's shared memory at the same offset.
#pragma once
#include <cuda.h>  // CUtensorMap, for the streaming build's stubs

#include <vector>
namespace emu {
inline unsigned cluster_ranks = 1, cluster_count = 0, cluster_gen = 0;
inline std::vector<std::vector<float>> block_smem;  // per cluster rank
}  // namespace emu
inline uint32_t cluster_rank() { return (uint32_t)emu::cur->slot; }
inline uint32_t cluster_size() { return emu::cluster_ranks; }
inline void cluster_sync() {
  unsigned g = emu::cluster_gen;
  if (++emu::cluster_count == (unsigned)emu::nthreads * emu::cluster_ranks) { emu::cluster_count = 0; ++emu::cluster_gen; ++emu::progress; }
  else while (emu::cluster_gen == g) emu::yield();
}
inline float ld_cluster(const float* p, uint32_t rank) {
  const std::vector<float>& mine = emu::block_smem[emu::cur->slot];
  const ptrdiff_t off = p - mine.data();
  if (off < 0 || (size_t)off >= mine.size() || rank >= emu::cluster_ranks) { fprintf(stderr, "ld_cluster out of range\n"); abort(); }
  return emu::block_smem[rank][off];
}
inline uint4 ld_stream(const void* p) {
  if ((uintptr_t)p % 16) { fprintf(stderr, "misaligned 16-byte weight load %p\n", p); abort(); }
  uint4 v; memcpy(&v, p, 16); return v;
}
inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) { return __byte_perm(a, b, sel); }
inline float* shared_base() { return emu::block_smem[emu::cur->slot].data(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::syncwarp(); }
// The streaming build (`skinny_tma`: mbarriers, TMA, shared-memory loads by
// address) is not emulated: these let the file compile, and stop if run.
[[noreturn]] inline void skinny_tma_unsupported() { fprintf(stderr, "FAIL: the skinny kernel's TMA build is not emulated\n"); exit(4); }
inline void mbar_init(uint32_t, uint32_t) { skinny_tma_unsupported(); }
inline void mbar_init_fence() { skinny_tma_unsupported(); }
inline void mbar_expect_tx(uint32_t, uint32_t) { skinny_tma_unsupported(); }
inline void mbar_arrive(uint32_t) { skinny_tma_unsupported(); }
inline void mbar_wait(uint32_t, uint32_t) { skinny_tma_unsupported(); }
inline void tma_load(uint32_t, const CUtensorMap*, uint32_t, int, int, int) { skinny_tma_unsupported(); }
inline uint4 lds128(uint32_t) { skinny_tma_unsupported(); }
inline uint2 lds64(uint32_t) { skinny_tma_unsupported(); }
inline void reads_before_async_writes() { skinny_tma_unsupported(); }
inline uint32_t smem_addr(const void*) { skinny_tma_unsupported(); }
inline uint64_t evict_first_policy() { skinny_tma_unsupported(); }
inline void tma_load_hint(uint32_t, const CUtensorMap*, uint32_t, int, int, int, uint64_t) { skinny_tma_unsupported(); }
