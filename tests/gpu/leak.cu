// Planted bug: two device allocations are never freed.
#include "check.cuh"

__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}

int main() {
  int *a, *b, *c;
  CHECK(cudaMalloc(&a, 4096));
  CHECK(cudaMalloc(&b, 1 << 20));
  CHECK(cudaMalloc(&c, 256));
  fill<<<4, 256>>>(a, 1024);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(c));
  // BUG: `a` and `b` leak.
  std::puts("leak done");
  return 0;
}
