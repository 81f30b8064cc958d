// Emulated pieces of kernels/gemm_pack.cu (its PTX section).
#pragma once
inline float round_tf32(float x) {
  uint32_t u; memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;  // cvt.rna: to nearest, ties away from zero
  float r; memcpy(&r, &u, 4); return r;
}

inline void start_dependents() {}  // one kernel at a time: nothing to overlap
