// Race-free twin of reduction.cu: the per-block partial sums are added
// with atomicAdd. Expected: no global race.
#include "../check.cuh"

__global__ void sum(const float *x, float *total, int n) {
  __shared__ float part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(total, part[0]);
  }
}

int main() {
  const int n = 64 * 256;
  float *x, *total;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&total, sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = 1.0f;
  *total = 0.0f;
  sum<<<64, 256>>>(x, total, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("sum %.0f of %d\n", *total, n);
  CHECK(cudaFree(x));
  CHECK(cudaFree(total));
  return 0;
}
