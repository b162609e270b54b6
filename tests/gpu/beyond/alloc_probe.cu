// No bug: asks for the largest buffer that fits by halving the request until
// cudaMalloc succeeds. Every failure is checked and cleared, the program uses
// the buffer and exits 0. memcheck still reports each failed cudaMalloc.
#include "../check.cuh"

__global__ void fill(char *p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1;
}

int main() {
  size_t bytes = (size_t)1 << 40;  // 1 TiB: more than any GPU has
  char *p = nullptr;
  int tries = 0;
  for (;;) {
    ++tries;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaSuccess) break;
    if (err != cudaErrorMemoryAllocation) CHECK(err);
    (void)cudaGetLastError();  // clear the sticky-free error and try smaller
    bytes /= 2;
  }
  size_t n = 1 << 20;
  fill<<<(n + 255) / 256, 256>>>(p, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(p));
  std::printf("alloc_probe done: %zu MiB after %d tries\n", bytes >> 20, tries);
  return 0;
}
