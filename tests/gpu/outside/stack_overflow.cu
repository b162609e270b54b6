// A recursive device function that runs out of stack: each call keeps a
// local array, and the depth is the data's. memcheck reports the
// hardware exception ("Stack overflow"), as do racecheck, initcheck and
// synccheck: one fault seen by every tool.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int depth_sum(const int *data, int n) {
  volatile int local[64];
  for (int i = 0; i < 64; ++i) local[i] = data[n % 8] + i;
  if (n == 0) return local[0];
  return local[n % 64] + depth_sum(data, n - 1);  // BUG: recursion as deep as the data says
}

__global__ void walk(const int *data, int *out, int n) {
  out[threadIdx.x] = depth_sum(data, n);
}

int main() {
  int *data, *out;
  cudaMalloc(&data, 8 * sizeof(int));
  cudaMalloc(&out, 32 * sizeof(int));
  cudaMemset(data, 0, 8 * sizeof(int));
  walk<<<1, 32>>>(data, out, 100000);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("walk: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
