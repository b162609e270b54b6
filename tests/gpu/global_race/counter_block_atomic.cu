// Race-free twin of counter_block.cu: the increment is an atomic.
// Expected: no global race.
#include "../check.cuh"

__global__ void count_hits(const int *flags, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) {
    atomicAdd(count, 1);
  }
}

int main() {
  const int n = 256;
  int *flags, *count;
  CHECK(cudaMallocManaged(&flags, n * sizeof(int)));
  CHECK(cudaMallocManaged(&count, sizeof(int)));
  for (int i = 0; i < n; ++i) flags[i] = 1;
  *count = 0;
  count_hits<<<1, n>>>(flags, count, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("counted %d of %d\n", *count, n);
  CHECK(cudaFree(flags));
  CHECK(cudaFree(count));
  return 0;
}
