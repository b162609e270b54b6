// Planted race: 256 threads of one block increment one counter in global
// memory without an atomic (a read and a write of every thread against
// every other's). Expected: a global race at the increment, both accesses
// on its line; compute-sanitizer's racecheck sees shared memory only.
#include "../check.cuh"

__global__ void count_hits(const int *flags, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) {
    *count = *count + 1;  // RACE: read and write, every thread
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
