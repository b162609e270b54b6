// A host copy of device memory nobody wrote: the buffer is allocated, a
// kernel fills its first half only, and the whole buffer is copied back.
// initcheck reports the copy ("Host API uninitialized memory access"),
// not a kernel.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill_half(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) out[i] = 1.0f;
}

int main() {
  const int n = 1 << 12;
  float *d = nullptr;
  cudaMalloc(&d, n * sizeof(float));
  fill_half<<<(n + 255) / 256, 256>>>(d, n);
  static float h[1 << 12];
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);  // BUG: the second half was never written
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += h[i];
  std::printf("sum %f\n", sum);
  cudaFree(d);
  return 0;
}
