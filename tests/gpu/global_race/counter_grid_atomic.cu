// Race-free twin of counter_grid.cu: each thread adds with atomicAdd.
// Expected: no global race.
#include "../check.cuh"

__global__ void count_positive(const float *x, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) {
    atomicAdd(count, 1);
  }
}

int main() {
  const int n = 64 * 128;
  float *x;
  int *count;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));
  CHECK(cudaMallocManaged(&count, sizeof(int)));
  for (int i = 0; i < n; ++i) x[i] = (i % 3 == 0) ? -1.0f : 1.0f;
  *count = 0;
  count_positive<<<64, 128>>>(x, count, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("positive: %d\n", *count);
  CHECK(cudaFree(x));
  CHECK(cudaFree(count));
  return 0;
}
