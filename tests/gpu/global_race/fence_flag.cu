// Race-free twin of read_other_block.cu: block 0 publishes its stores with
// a fence and an atomic flag; block 1 waits for the flag (atomically),
// fences, then reads. Both blocks are resident at once (2 blocks).
// Expected: no global race (the flag's accesses are atomics).
#include "../check.cuh"

__global__ void produce_then_consume(float *buf, int *ready, float *out, int n) {
  int t = threadIdx.x;
  if (blockIdx.x == 0) {
    for (int i = t; i < n; i += blockDim.x) {
      buf[i] = float(i) * 0.5f;
    }
    __syncthreads();
    if (t == 0) {
      __threadfence();
      atomicExch(ready, 1);
    }
  } else {
    if (t == 0) {
      while (atomicAdd(ready, 0) == 0) {
      }
      __threadfence();
    }
    __syncthreads();
    float sum = 0.0f;
    for (int i = t; i < n; i += blockDim.x) {
      sum += buf[i];
    }
    out[t] = sum;
  }
}

int main() {
  const int n = 4096, threads = 128;
  float *buf, *out;
  int *ready;
  CHECK(cudaMalloc(&buf, n * sizeof(float)));
  CHECK(cudaMalloc(&ready, sizeof(int)));
  CHECK(cudaMallocManaged(&out, threads * sizeof(float)));
  CHECK(cudaMemset(ready, 0, sizeof(int)));
  produce_then_consume<<<2, threads>>>(buf, ready, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("out[0] = %.1f\n", out[0]);
  CHECK(cudaFree(buf));
  CHECK(cudaFree(ready));
  CHECK(cudaFree(out));
  return 0;
}
