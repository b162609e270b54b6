// Planted bug for the "killed run" capture: an out-of-bounds write, then the
// host sleeps as a hung program would, so the capture script can kill the
// sanitizer mid-run and keep whatever XML it had written.
#include <unistd.h>
#include "check.cuh"

__global__ void oob_write_then_hang(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;  // BUG: no bounds check
}

int main() {
  const int n = 1000;
  int *out;
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  oob_write_then_hang<<<4, 256>>>(out, n);
  cudaDeviceSynchronize();
  std::puts("sleeping like a hung job");
  std::fflush(stdout);
  sleep(600);
  return 0;
}
