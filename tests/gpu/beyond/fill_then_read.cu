// No bug: one kernel fills a buffer, a second reads it. initcheck told to
// skip the first launch (`--launch-skip 1`, as `cudawatch run
// --sanitizer-launch-skip 1` passes it) does not track the fill, so every
// read in the second looks uninitialised: the cost lever's false report.
#include "../check.cuh"

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0f;
}

__global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

int main() {
  const int n = 1 << 12;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  fill<<<(n + 255) / 256, 256>>>(x, n);
  CHECK(cudaGetLastError());
  scale<<<(n + 255) / 256, 256>>>(x, y, n);
  CHECK(cudaGetLastError());
  float first = 0;
  CHECK(cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  std::printf("fill_then_read done: %.1f\n", first);
  return first == 2.0f ? 0 : 1;
}
