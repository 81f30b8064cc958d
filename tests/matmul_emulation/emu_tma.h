// Emulated kernels/tma.cuh (run.sh copies this file in its place):
// mbarriers with phases, arrival counts and transaction bytes; TMA tiled
// loads with 128-byte swizzle and zero fill past the tensor's edges, which
// land at once (a copy in flight is not modelled), and tiled stores
// (emu_wg.h), float32 rounded to TF32
// (to nearest, ties to even) under a TFLOAT32 map as the H200's TMA unit
// rounds (bench/explore/tf32-tma/). Shared-memory addresses
// are offsets into `emu_window()`, which each driver defines as the
// running block's shared memory (wg_main.cc, emu_skinny.h).
#pragma once
#include <cuda.h>  // CUtensorMap

namespace myns {
struct EmuMap { const unsigned char* base; uint64_t dims[3]; uint64_t strides[2]; uint32_t box[3]; int elem; bool tf32; bool swizzle; };
inline unsigned char* emu_window();  // shared-memory window (addresses are offsets into it)
// The emulated cuTensorMapEncodeTiled: dims innermost first, byte strides
// of dims 1 and 2, a box of b0 x b1 (x 1); tf32: element type TFLOAT32;
// swizzle: 128-byte swizzle (a box row of 128 bytes), else none.
inline CUtensorMap emu_tensor_map(const void* base, uint64_t d0, uint64_t d1, uint64_t d2, uint64_t s1, uint64_t s2, uint32_t b0, uint32_t b1, int elem,
                                  bool tf32 = false, bool swizzle = true) {
  // (The driver refuses a box side over 256 elements, and starts or strides off 16 bytes.)
  if (b0 > 256 || b1 > 256) { fprintf(stderr, "TMA box %u x %u: a side over 256\n", b0, b1); abort(); }
  if ((uintptr_t)base % 16 || s1 % 16 || s2 % 16) { fprintf(stderr, "TMA map start or strides off 16 bytes\n"); abort(); }
  if (swizzle && b0 * elem != 128) { fprintf(stderr, "128-byte swizzle with box rows of %u bytes\n", b0 * elem); abort(); }
  CUtensorMap m; memset(&m, 0, sizeof m);
  EmuMap e{(const unsigned char*)base, {d0, d1, d2}, {s1, s2}, {b0, b1, 1}, elem, tf32, swizzle};
  static_assert(sizeof(e) <= sizeof(m), "map");
  memcpy(&m, &e, sizeof e);
  return m;
}
struct EmuBar { int expected = 0, pending = 0; long tx = 0; unsigned phase = 0; bool init = false; };
inline EmuBar emu_bars[16][64];
inline long emu_progress = 0;
inline EmuBar& bar_at(uint32_t addr) {
  // A kernel's barriers are contiguous (fewer than 64; where depends on the
  // kernel's tile and type), and reset at each block: index them by address,
  // per block of a cluster (each has its own shared memory).
  if (addr % 8) { fprintf(stderr, "misaligned mbarrier\n"); abort(); }
  return emu_bars[emu::cur->slot % 16][(addr / 8) % 64];
}
inline void bar_check(EmuBar& b) {
  if (b.pending == 0 && b.tx == 0) { b.phase++; b.pending = b.expected; }
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  auto& b = bar_at(bar); b = EmuBar{}; b.expected = b.pending = (int)count; b.init = true; emu_progress++;
}
__device__ __forceinline__ void mbar_init_fence() {}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  auto& b = bar_at(bar); if (!b.init) abort(); b.tx += bytes; b.pending--; if (b.pending < 0) { fprintf(stderr, "mbarrier over-arrived\n"); abort(); } bar_check(b); emu_progress++;
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  auto& b = bar_at(bar); if (!b.init) abort(); b.pending--; if (b.pending < 0) { fprintf(stderr, "mbarrier over-arrived\n"); abort(); } bar_check(b); emu_progress++;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  auto& b = bar_at(bar);
  while ((b.phase & 1) == parity) emu::yield();  // phase `parity` not yet complete
}
__device__ __forceinline__ void mbar_wait_warp(uint32_t bar, uint32_t parity) { mbar_wait(bar, parity); }
// The H200 stops a TMA load or store whose box starts off 16 bytes along
// the innermost dimension with an illegal instruction, whatever the map's
// start (stores: bench/explore/tma-rows/; loads: bench/explore/row-groups/).
inline void emu_check_box_start(const char* what, int64_t c0, int elem) {
  if ((c0 * elem) % 16) { fprintf(stderr, "TMA %s box starting %d bytes off 16 bytes\n", what, (int)((c0 * elem) % 16)); abort(); }
}
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  const EmuMap* m = reinterpret_cast<const EmuMap*>(map);
  if (dst % 1024) { fprintf(stderr, "TMA dst not 1024-aligned for 128B swizzle\n"); abort(); }
  if (m->box[0] * m->elem != 128) { fprintf(stderr, "box inner bytes != 128\n"); abort(); }
  emu_check_box_start("load", c0, m->elem);
  unsigned char* out = emu_window() + dst;
  uint32_t rows = m->box[1] * m->box[2];
  for (uint32_t i2 = 0; i2 < m->box[2]; ++i2)
    for (uint32_t i1 = 0; i1 < m->box[1]; ++i1) {
      uint32_t R = i1 + m->box[1] * i2;
      for (uint32_t i0 = 0; i0 < m->box[0]; ++i0) {
        int64_t x0 = (int64_t)c0 + i0, x1 = (int64_t)c1 + i1, x2 = (int64_t)c2 + i2;
        unsigned char v[16] = {0};
        if (x0 >= 0 && x1 >= 0 && x2 >= 0 && (uint64_t)x0 < m->dims[0] && (uint64_t)x1 < m->dims[1] && (uint64_t)x2 < m->dims[2])
          memcpy(v, m->base + x0 * m->elem + x1 * m->strides[0] + x2 * m->strides[1], m->elem);
        if (m->tf32) {
          uint32_t u; memcpy(&u, v, 4);
          if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0xFFFu + ((u >> 13) & 1u)) & ~0x1FFFu;
          else if (u & 0x7FFFFFu) u = 0x7FFFE000u;  // NaN (as the probe saw)
          memcpy(v, &u, 4);
        }
        uint32_t off = R * 128 + i0 * m->elem;
        uint32_t phys = off ^ ((R % 8) << 4);
        memcpy(out + phys, v, m->elem);
      }
    }
  (void)rows;
  auto& b = bar_at(bar); b.tx -= (long)m->box[0] * m->box[1] * m->box[2] * m->elem; bar_check(b); emu_progress++;
}

}  // namespace myns
