// Planted bug: the last block reads past the end of a 1000-int buffer
// (the grid covers 1024 threads and the kernel has no bounds check).
#include "check.cuh"

__global__ void oob_read(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i % n] = in[i];  // BUG: i may be >= n
}

int main() {
  const int n = 1000;
  int *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMemset(in, 0, n * sizeof(int)));
  oob_read<<<4, 256>>>(in, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::puts("oob_read done");
  return 0;
}
