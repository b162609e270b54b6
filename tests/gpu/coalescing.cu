// Performance bug: `gather_strided` reads with a stride of 32 floats, so each
// warp touches 32 sectors per request where `gather_coalesced` touches 4.
#include "check.cuh"

__global__ void gather_coalesced(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void gather_strided(const float *in, float *out, int stride, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(size_t)i * stride];  // BUG: strided
}

int main() {
  const int n = 1 << 22;
  const int stride = 32;
  float *in, *out;
  CHECK(cudaMalloc(&in, (size_t)n * stride * sizeof(float)));
  CHECK(cudaMalloc(&out, (size_t)n * sizeof(float)));
  CHECK(cudaMemset(in, 0, (size_t)n * stride * sizeof(float)));
  gather_coalesced<<<n / 256, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  gather_strided<<<n / 256, 256>>>(in, out, stride, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::puts("coalescing done");
  return 0;
}
