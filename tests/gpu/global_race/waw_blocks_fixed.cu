// Race-free twin of waw_blocks.cu: each block's tile starts at
// blockIdx.x * blockDim.x, so no two blocks write one address.
// Expected: no global race.
#include "../check.cuh"

__global__ void scale_tiles(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i] * 2.0f;
  }
}

int main() {
  const int blocks = 32, n = blocks * 128;
  float *in, *out;
  CHECK(cudaMallocManaged(&in, n * sizeof(float)));
  CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = float(i);
  scale_tiles<<<blocks, 128>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("out[127] = %.1f\n", out[127]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return 0;
}
