// Bug in the user's kernel, inside an inlined CUDA function: every lane calls
// __syncwarp with a mask naming only lanes 0-15, so lanes 16-31 call it with a
// mask that leaves themselves out. synccheck's record is "at
// __syncwarp(unsigned int)+0x.. in sm_30_intrinsics.hpp" with a device frame
// in this file: the line to fix is here, not in CUDA's header.
#include "../check.cuh"

__global__ void half_mask(int *out) {
  int lane = threadIdx.x % 32;
  out[threadIdx.x] = lane;
  __syncwarp(0x0000ffff);  // BUG: lanes 16-31 are not in the mask
  out[threadIdx.x] += out[threadIdx.x ^ 1];
}

int main() {
  int *out;
  CHECK(cudaMalloc(&out, 64 * sizeof(int)));
  half_mask<<<1, 64>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(out));
  std::puts("inlined_syncwarp done");
  return 0;
}
