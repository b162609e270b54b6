// Planted bug: built only for sm_100 machine code with no PTX (see the
// capture script), so an H100 (sm_90) has no image to run.
#include "check.cuh"

__global__ void touch(int *p) { p[threadIdx.x] = threadIdx.x; }

int main() {
  int *p;
  CHECK(cudaMalloc(&p, 32 * sizeof(int)));
  touch<<<1, 32>>>(p);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::puts("no_kernel_image done");
  return 0;
}
