// Emulated pieces of kernels/gemm_skinny.cu (its PTX section): thread-block
// clusters run their blocks together as one set of fibers, each block with
// its own shared memory; cluster_sync is a barrier over all of them;
// ld_cluster reads another block's shared memory at the same offset.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <cstring>

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
inline float ld_cluster(uint32_t addr, uint32_t rank) {
  const size_t off = addr / sizeof(float);
  if (addr % sizeof(float) || off >= emu::block_smem[emu::cur->slot].size() || rank >= emu::cluster_ranks) { fprintf(stderr, "ld_cluster out of range\n"); abort(); }
  return emu::block_smem[rank][off];
}
inline uint4 ld_stream(const void* p) {
  if ((uintptr_t)p % 16) { fprintf(stderr, "misaligned 16-byte weight load %p\n", p); abort(); }
  uint4 v; memcpy(&v, p, 16); return v;
}
inline uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) { return __byte_perm(a, b, sel); }
inline float* shared_base() { return emu::block_smem[emu::cur->slot].data(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::syncwarp(); }
// The streaming build (`skinny_tma`): emu_tma.h's mbarriers and TMA loads
// (installed as tma.cuh) on the running block's shared memory, addressed by
// offsets into it as on the GPU; its shared-memory loads read there.
#include "tma.cuh"
namespace myns {
inline unsigned char* emu_window() { return reinterpret_cast<unsigned char*>(emu::block_smem[emu::cur->slot].data()); }
}  // namespace myns
inline uint32_t smem_addr(const void* p) {
  const ptrdiff_t off = static_cast<const unsigned char*>(p) - myns::emu_window();
  if (off < 0 || (size_t)off >= emu::block_smem[emu::cur->slot].size() * sizeof(float)) { fprintf(stderr, "smem_addr outside shared memory\n"); abort(); }
  return (uint32_t)off;
}
template <int BYTES>
inline void emu_lds(void* v, uint32_t a) {
  if (a % BYTES || a + BYTES > emu::block_smem[emu::cur->slot].size() * sizeof(float)) { fprintf(stderr, "bad ld.shared of %d bytes at %u\n", BYTES, a); abort(); }
  memcpy(v, myns::emu_window() + a, BYTES);
}
inline uint4 lds128(uint32_t a) { uint4 v; emu_lds<16>(&v, a); return v; }
inline uint2 lds64(uint32_t a) { uint2 v; emu_lds<8>(&v, a); return v; }
inline float lds32f(uint32_t a) { float v; emu_lds<4>(&v, a); return v; }
inline void reads_before_async_writes() {}  // TMA copies land at once here
inline uint64_t evict_first_policy() { return 0; }
inline void tma_load_hint(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2, uint64_t) { myns::tma_load(dst, map, bar, c0, c1, c2); }
