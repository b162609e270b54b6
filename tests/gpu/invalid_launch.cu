// Planted bug: a launch asks for 2048 threads per block (the limit is 1024).
#include "check.cuh"

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

int main() {
  const int n = 4096;
  float *x;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  scale<<<2, 2048>>>(x, n);  // BUG: too many threads per block
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::puts("invalid_launch done");
  return 0;
}
