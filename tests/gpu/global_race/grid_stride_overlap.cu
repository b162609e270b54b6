// Planted race: a grid-stride loop whose stride is one block's width, not
// the grid's, so every block walks (and writes) every other block's range.
// Expected: a global race at the store, across blocks (write after write).
#include "../check.cuh"

__global__ void relu(const float *in, float *out, int n) {
  int stride = blockDim.x;  // BUG: should be blockDim.x * gridDim.x
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;  // RACE: write, many blocks
  }
}

int main() {
  const int n = 1 << 14;
  float *in, *out;
  CHECK(cudaMallocManaged(&in, n * sizeof(float)));
  CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = float(i % 5) - 2.0f;
  relu<<<16, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("out[n-1] = %.1f\n", out[n - 1]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return 0;
}
