// Planted bug: a device-side assert fails for one thread.
#include <cassert>
#include "check.cuh"

__global__ void check_positive(const int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(v[i] >= 0);  // BUG: element 37 is negative
}

int main() {
  const int n = 64;
  int host[n];
  for (int i = 0; i < n; ++i) host[i] = (i == 37) ? -1 : i;
  int *v;
  CHECK(cudaMalloc(&v, sizeof(host)));
  CHECK(cudaMemcpy(v, host, sizeof(host), cudaMemcpyHostToDevice));
  check_positive<<<1, 64>>>(v, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::puts("device_assert done");
  return 0;
}
