// Race-free twin of grid_stride_overlap.cu: the stride is the grid's width.
// Expected: no global race.
#include "../check.cuh"

__global__ void relu(const float *in, float *out, int n) {
  int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
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
