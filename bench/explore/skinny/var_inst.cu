// One variant configuration of skinny_var.cuh (-DCFG_WARPS -DCFG_L -DCFG_PIPE -DCFG_MINB), bf16.
#include "skinny_var.cuh"
#define ONE(WK, VEC, MT)                                                                          \
  __global__ void __launch_bounds__(CFG_WARPS * 32, CFG_MINB) k_##WK##_##VEC##_##MT(const var::SkinnyParams p) { \
    var::skinny_gemm<__nv_bfloat16, WK, VEC, MT, CFG_WARPS, CFG_L, CFG_PIPE>(p);                              \
  }
ONE(true, true, 1) ONE(true, true, 2) ONE(false, true, 1) ONE(false, true, 2)
#ifdef WITH_ELEMS
ONE(true, false, 1) ONE(true, false, 2) ONE(false, false, 1) ONE(false, false, 2)
#endif
static const void* get_func(int wk, int vec, int mt) {
  if (vec) {
    if (wk) return mt == 1 ? (const void*)k_true_true_1 : (const void*)k_true_true_2;
    return mt == 1 ? (const void*)k_false_true_1 : (const void*)k_false_true_2;
  }
#ifdef WITH_ELEMS
  if (wk) return mt == 1 ? (const void*)k_true_false_1 : (const void*)k_true_false_2;
  return mt == 1 ? (const void*)k_false_false_1 : (const void*)k_false_false_2;
#else
  return nullptr;
#endif
}
#include "launch.cuh"
