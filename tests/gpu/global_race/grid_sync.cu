// Race-free twin of read_other_block.cu: a cooperative launch, and a grid
// sync between block 0's stores and block 1's loads.
// Expected: no global race.
#include <cooperative_groups.h>

#include "../check.cuh"

namespace cg = cooperative_groups;

__global__ void produce_then_consume(float *buf, float *out, int n) {
  cg::grid_group grid = cg::this_grid();
  int t = threadIdx.x;
  if (blockIdx.x == 0) {
    for (int i = t; i < n; i += blockDim.x) {
      buf[i] = float(i) * 0.5f;
    }
  }
  grid.sync();
  if (blockIdx.x == 1) {
    float sum = 0.0f;
    for (int i = t; i < n; i += blockDim.x) {
      sum += buf[i];
    }
    out[t] = sum;
  }
}

int main() {
  int n = 4096;
  const int threads = 128;
  float *buf, *out;
  CHECK(cudaMalloc(&buf, n * sizeof(float)));
  CHECK(cudaMallocManaged(&out, threads * sizeof(float)));
  CHECK(cudaMemset(buf, 0, n * sizeof(float)));
  void *args[] = {&buf, &out, &n};
  CHECK(cudaLaunchCooperativeKernel((void *)produce_then_consume, dim3(2), dim3(threads), args));
  CHECK(cudaDeviceSynchronize());
  std::printf("out[0] = %.1f\n", out[0]);
  CHECK(cudaFree(buf));
  CHECK(cudaFree(out));
  return 0;
}
