// The library's kernel source (kernels/gemm_skinny.cu, or a copy given by
// -DSKINNY_SRC) compiled as is, with a ctypes launcher.
#ifndef SKINNY_SRC
#define SKINNY_SRC "gemm_skinny.cu"
#endif
#include SKINNY_SRC
static const void* get_func(int wk, int vec, int mt) {
  const void* t[2][2][2] = {{{(const void*)mm_skinny_bf16_nv_m1, (const void*)mm_skinny_bf16_nv_m2},
                             {(const void*)mm_skinny_bf16_ne_m1, (const void*)mm_skinny_bf16_ne_m2}},
                            {{(const void*)mm_skinny_bf16_kv_m1, (const void*)mm_skinny_bf16_kv_m2},
                             {(const void*)mm_skinny_bf16_ke_m1, (const void*)mm_skinny_bf16_ke_m2}}};
  return t[wk][vec ? 0 : 1][mt - 1];
}
#include "launch.cuh"
