// Correct: a histogram and a running maximum through libcu++'s atomics
// (cuda::atomic_ref), as graph and reduction codes write them. ncu's
// source page counts their instructions per line in parentheses
// ("Global(3)", "32(3)").
#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>

__global__ void histogram(const int *values, unsigned *bins, int *maximum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = values[i];
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> bin(bins[v & 255]);
  bin.fetch_add(1u, cuda::memory_order_relaxed);
  cuda::atomic_ref<int, cuda::thread_scope_device> top(*maximum);
  int seen = top.load(cuda::memory_order_relaxed);
  while (v > seen && !top.compare_exchange_weak(seen, v, cuda::memory_order_relaxed)) {
  }
}

int main() {
  const int n = 1 << 20;
  int *values, *maximum;
  unsigned *bins;
  cudaMalloc(&values, n * sizeof(int));
  cudaMalloc(&bins, 256 * sizeof(unsigned));
  cudaMalloc(&maximum, sizeof(int));
  int *h = new int[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 2654435761u) >> 8;
  cudaMemcpy(values, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(bins, 0, 256 * sizeof(unsigned));
  cudaMemset(maximum, 0, sizeof(int));
  histogram<<<n / 256, 256>>>(values, bins, maximum, n);
  int top = 0;
  cudaMemcpy(&top, maximum, sizeof(int), cudaMemcpyDeviceToHost);
  printf("max %d\n", top);
  delete[] h;
  return 0;
}
