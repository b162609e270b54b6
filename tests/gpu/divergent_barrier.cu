// Planted bug: __syncthreads() inside a branch that only half the warp takes.
#include "check.cuh"

__global__ void divergent_barrier(int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x % 32 < 16) {
    __syncthreads();  // BUG: not reached by every thread of the block
  }
  out[threadIdx.x] = s[threadIdx.x];
}

int main() {
  int *out;
  CHECK(cudaMalloc(&out, 64 * sizeof(int)));
  divergent_barrier<<<1, 64>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(out));
  std::puts("divergent_barrier done");
  return 0;
}
