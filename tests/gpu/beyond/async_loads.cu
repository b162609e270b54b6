// Three correct, coalesced kernels whose global loads reach ncu's counters
// differently (issue 23's table review): what "ld bytes used" can say.
//   plain_copy      LDG: each thread loads its own 4 bytes (the reference).
//   async_copy      cp.async (LDGSTS) global -> shared, as the multistage
//                   GEMMs of cuBLAS, cuDNN and CUTLASS load their tiles.
//   broadcast_scale every thread of a warp loads the same element.
#include <cuda_pipeline.h>
#include <cstdio>

__global__ void plain_copy(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

__global__ void async_copy(const float *in, float *out, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] * 2.0f;
}

__global__ void broadcast_scale(const float *scale, const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * scale[blockIdx.x % 4];
}

int main() {
  const int n = 1 << 20;
  float *in, *out, *scale;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMalloc(&scale, 4 * sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  cudaMemset(scale, 0, 4 * sizeof(float));
  plain_copy<<<n / 256, 256>>>(in, out, n);
  async_copy<<<n / 256, 256>>>(in, out, n);
  broadcast_scale<<<n / 256, 256>>>(scale, in, out, n);
  cudaError_t err = cudaDeviceSynchronize();
  printf("async_loads: %s\n", cudaGetErrorString(err));
  cudaFree(in);
  cudaFree(out);
  cudaFree(scale);
  return err == cudaSuccess ? 0 : 1;
}
