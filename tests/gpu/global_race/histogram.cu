// Planted race: a histogram whose bin increment is missing its atomic;
// threads of every block hit the same 16 bins.
// Expected: a global race at the increment.
#include "../check.cuh"

__global__ void histogram(const unsigned char *data, unsigned *bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    bins[data[i] % 16] += 1;  // RACE: read and write of a bin
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
