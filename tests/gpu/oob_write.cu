// Planted bug: the last block writes past the end of a 1000-int buffer.
#include "check.cuh"

__global__ void oob_write(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;  // BUG: no `if (i < n)`
}

int main() {
  const int n = 1000;
  int *out;
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  oob_write<<<4, 256>>>(out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(out));
  std::puts("oob_write done");
  return 0;
}
