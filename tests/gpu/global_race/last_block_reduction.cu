// Race-free twin of reduction.cu, the way CUDA's threadFenceReduction
// sample and ATen's reductions sum across blocks: each block writes its
// partial sum, fences, and counts itself done on an atomic; the block that
// counts last reads every partial. 64 blocks, more than fence_flag's two.
// Expected: no global race (the partials are ordered by the fence and the
// atomic count before the last block reads them).
#include "../check.cuh"

__device__ unsigned int blocks_done = 0;

__global__ void sum_all(const float *in, float *partial, float *out, int n) {
  __shared__ float s[256];
  __shared__ bool last;
  int t = threadIdx.x;
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += in[i];
  s[t] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned int done = atomicAdd(&blocks_done, 1u);
    last = done == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float total = 0.0f;
  for (int b = t; b < gridDim.x; b += blockDim.x) total += partial[b];
  s[t] = total;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) {
    *out = s[0];
    blocks_done = 0;
  }
}

int main() {
  const int blocks = 64, threads = 256, n = blocks * threads * 4;
  float *in, *partial, *out;
  CHECK(cudaMallocManaged(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&partial, blocks * sizeof(float)));
  CHECK(cudaMallocManaged(&out, sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = 1.0f;
  sum_all<<<blocks, threads>>>(in, partial, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("sum %.0f of %d\n", *out, n);
  CHECK(cudaFree(in));
  CHECK(cudaFree(partial));
  CHECK(cudaFree(out));
  return 0;
}
