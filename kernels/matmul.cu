// out[b][m][n] = a[b][m][k] @ b[b][k][n] for arbitrarily strided a and b (so
// transposed views need no copy). A simple shared-memory tiled kernel: the
// fallback for float64 and for layouts the fast kernels cannot take
// (matmul_tc.cu, matmul_simt.cu, matmul_sm90a.cu); correct for every shape.
#include "matmul_common.cuh"

constexpr int TILE = 16;

template <typename T>
__device__ void matmul_impl(const myns::GemmParams& p) {
  using A = typename myns::Acc<T>::type;
  __shared__ A ta[TILE][TILE + 1];
  __shared__ A tb[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t tiles_m = (M + TILE - 1) / TILE;
  // Grid y and z are capped at 65535, so walk row tiles and batches in loops;
  // x covers N tiles.
  for (int64_t bz = blockIdx.z; bz < p.batch; bz += gridDim.z) {
    const T* a = static_cast<const T*>(p.a) + bz * p.sab;
    const T* b = static_cast<const T*>(p.b) + bz * p.sbb;
    T* out = static_cast<T*>(p.c) + bz * p.scb;
    for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
      const int64_t row = tm * TILE + ty;
      const int64_t col = (int64_t)blockIdx.x * TILE + tx;
      A acc = 0;
      for (int64_t k0 = 0; k0 < K; k0 += TILE) {
        const int64_t ka = k0 + tx, kb = k0 + ty;
        ta[ty][tx] = (row < M && ka < K) ? myns::to_acc(a[row * p.sam + ka * p.sak]) : A(0);
        tb[ty][tx] = (kb < K && col < N) ? myns::to_acc(b[kb * p.sbk + col * p.sbn]) : A(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += ta[ty][k] * tb[k][tx];
        __syncthreads();
      }
      if (row < M && col < N) {
        T* o = out + row * p.scm + col * p.scn;
        if (p.beta) acc += myns::to_acc(*o);
        *o = myns::from_acc<T>(acc);
      }
    }
  }
}

#define MYNS_MATMUL(suffix, T)                                                                        \
  extern "C" __global__ void __launch_bounds__(TILE * TILE) matmul_##suffix(const myns::GemmParams p) { \
    matmul_impl<T>(p);                                                                                \
  }
MYNS_FOR_EACH_FLOAT(MYNS_MATMUL)
