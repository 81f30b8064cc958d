// Shared ctypes entry point: launches get_func(wk, vec, mt) (a kernel taking
// one 128-byte SkinnyParams by value) on a grid (gx, ranks, gz), as a cluster
// of `ranks` blocks along y when ranks > 1 (as src/gemm/skinny.rs does).
#include <cuda_runtime.h>
static const void* get_func(int wk, int vec, int mt);
extern "C" int skinny_launch(int wk, int vec, int mt, const void* params, int gx, int ranks, int gz, int threads, int smem,
                             void* stream) {
  const void* f = get_func(wk, vec, mt);
  if (!f) return -1;
  static const void* done[64];
  static int ndone = 0;
  bool seen = false;
  for (int i = 0; i < ndone; ++i) seen |= done[i] == f;
  if (!seen) {
    cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024);
    if (e != cudaSuccess) return 1000 + (int)e;
    if (ranks > 1 || true) cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (ndone < 64) done[ndone++] = f;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(gx, ranks, gz);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = (cudaStream_t)stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = ranks;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = ranks > 1 ? 1 : 0;
  void* args[1] = {const_cast<void*>(params)};
  cudaError_t e = cudaLaunchKernelExC(&cfg, f, args);
  return (int)e;
}
