// Planted bug: an int store through a pointer that is 2 bytes off alignment.
#include "check.cuh"

__global__ void misaligned_store(char *buf) {
  int *p = reinterpret_cast<int *>(buf + 2);  // BUG: not 4-byte aligned
  p[threadIdx.x] = 42;
}

int main() {
  char *buf;
  CHECK(cudaMalloc(&buf, 1024));
  misaligned_store<<<1, 32>>>(buf);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(buf));
  std::puts("misaligned done");
  return 0;
}
