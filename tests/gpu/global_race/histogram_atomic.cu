// Race-free twin of histogram.cu: each bin is incremented with atomicAdd.
// Expected: no global race.
#include "../check.cuh"

__global__ void histogram(const unsigned char *data, unsigned *bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[data[i] % 16], 1u);
  }
}

int main() {
  const int n = 1 << 16;
  unsigned char *data;
  unsigned *bins;
  CHECK(cudaMallocManaged(&data, n));
  CHECK(cudaMallocManaged(&bins, 16 * sizeof(unsigned)));
  for (int i = 0; i < n; ++i) data[i] = (unsigned char)(i * 7);
  for (int b = 0; b < 16; ++b) bins[b] = 0;
  histogram<<<32, 256>>>(data, bins, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned total = 0;
  for (int b = 0; b < 16; ++b) total += bins[b];
  std::printf("counted %u of %d\n", total, n);
  CHECK(cudaFree(data));
  CHECK(cudaFree(bins));
  return 0;
}
