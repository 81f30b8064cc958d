// Emulated pieces of kernels/gemm_pack.cu (its PTX section).
#pragma once
inline void start_dependents() {}  // one kernel at a time: nothing to overlap
