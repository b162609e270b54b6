// Planted bug in the user's own tiled GEMM, the textbook shared-memory
// kernel: the barrier after the multiply-accumulate is missing, so a fast
// warp loads the next tile over the one a slow warp still reads. Its name
// ends in `gemm`, as cuBLAS names its own kernels: the race is the user's
// all the same (its line information names this file).
#include <vector>
#include "../check.cuh"

constexpr int TILE = 16;

__global__ void tiled_gemm(const float *a, const float *b, float *c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < n / TILE; ++t) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    // BUG: missing __syncthreads(); before the next tile overwrites as, bs
  }
  c[row * n + col] = acc;
}

int main() {
  const int n = 256;
  std::vector<float> ones(n * n, 1.f);
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * n * sizeof(float)));
  CHECK(cudaMemcpy(a, ones.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, ones.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  tiled_gemm<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(a, b, c, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float c0 = 0.f;
  CHECK(cudaMemcpy(&c0, c, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("tiled_gemm done: c[0] = %.0f\n", c0);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return 0;
}
