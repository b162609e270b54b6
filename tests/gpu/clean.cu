// No bug: a bounds-checked SAXPY with every allocation initialised and freed.
#include "check.cuh"

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 16;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  saxpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  std::puts("clean done");
  return 0;
}
