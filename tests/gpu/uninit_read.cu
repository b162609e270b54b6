// Planted bug: a kernel copies from a buffer that nothing ever wrote.
#include "check.cuh"

__global__ void copy_uninit(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;  // BUG: `in` was never initialised
}

int main() {
  const int n = 512;
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  copy_uninit<<<2, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::puts("uninit_read done");
  return 0;
}
