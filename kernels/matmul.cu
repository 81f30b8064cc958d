// out[M, N] = a[M, K] @ b[K, N] for arbitrarily strided a and b (so transposed
// views need no copy); out is contiguous. A simple shared-memory tiled kernel:
// correct for every shape, not yet fast (tensor-core kernels come later).
#include "common.cuh"

constexpr int TILE = 16;

template <typename T>
__device__ void matmul_impl(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                            int64_t M, int64_t N, int64_t K,
                            int64_t sam, int64_t sak, int64_t sbk, int64_t sbn) {
  using A = typename myns::Acc<T>::type;
  __shared__ A ta[TILE][TILE + 1];
  __shared__ A tb[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles_m = (M + TILE - 1) / TILE;
  // Grid y is capped at 65535, so walk row tiles in a loop; x covers N tiles.
  for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
    const int64_t row = tm * TILE + ty;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    A acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += TILE) {
      const int64_t ka = k0 + tx, kb = k0 + ty;
      ta[ty][tx] = (row < M && ka < K) ? myns::to_acc(a[row * sam + ka * sak]) : A(0);
      tb[ty][tx] = (kb < K && col < N) ? myns::to_acc(b[kb * sbk + col * sbn]) : A(0);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < TILE; ++k) acc += ta[ty][k] * tb[k][tx];
      __syncthreads();
    }
    if (row < M && col < N) out[row * N + col] = myns::from_acc<T>(acc);
  }
}

#define MYNS_MATMUL(suffix, T)                                                              \
  extern "C" __global__ void __launch_bounds__(TILE * TILE)                                 \
  matmul_##suffix(const T* a, const T* b, T* out, int64_t M, int64_t N, int64_t K,         \
                  int64_t sam, int64_t sak, int64_t sbk, int64_t sbn) {                     \
    matmul_impl<T>(a, b, out, M, N, K, sam, sak, sbk, sbn);                                 \
  }
MYNS_FOR_EACH_FLOAT(MYNS_MATMUL)
