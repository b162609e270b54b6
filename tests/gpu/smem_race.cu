// Planted bug: threads read a neighbour's shared-memory slot with no
// __syncthreads() between the write and the read.
#include "check.cuh"

__global__ void smem_race(int *out) {
  __shared__ int tile[256];
  tile[threadIdx.x] = threadIdx.x;
  // BUG: missing __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

int main() {
  int *out;
  CHECK(cudaMalloc(&out, 256 * sizeof(int)));
  smem_race<<<1, 256>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(out));
  std::puts("smem_race done");
  return 0;
}
