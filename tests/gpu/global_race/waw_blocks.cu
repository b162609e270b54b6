// Planted race: each block writes a tile of 128 outputs starting at
// blockIdx.x * 120, so the last 8 of one block's tile are the first 8 of
// the next one's: two blocks write one address (write after write).
// Expected: a global race at the store, across neighbouring blocks.
#include "../check.cuh"

__global__ void scale_tiles(const float *in, float *out, int n) {
  int i = blockIdx.x * 120 + threadIdx.x;  // BUG: the step should be blockDim.x
  if (i < n) {
    out[i] = in[i] * 2.0f;  // RACE: write, blocks b and b+1
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
