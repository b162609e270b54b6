// No bug: copies a buffer to the GPU, between two device buffers and back,
// and launches no kernel. Nothing for ncu to profile, and nothing wrong.
#include "../check.cuh"

int main() {
  const int n = 1 << 16;
  static int host[n];
  for (int i = 0; i < n; ++i) host[i] = i;
  int *a, *b;
  CHECK(cudaMalloc(&a, sizeof host));
  CHECK(cudaMalloc(&b, sizeof host));
  CHECK(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, a, sizeof host, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  std::printf("no_kernels done %d\n", host[n - 1]);
  return 0;
}
