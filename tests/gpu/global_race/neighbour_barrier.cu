// Race-free twin of neighbour_no_barrier.cu: a __syncthreads() between the
// stores and the loads. Expected: no global race.
#include "../check.cuh"

__global__ void smooth(const float *in, float *scratch, float *out) {
  int t = threadIdx.x;
  scratch[t] = in[t] * 0.5f;
  __syncthreads();
  out[t] = scratch[t] + scratch[(t + 1) % blockDim.x];
}

int main() {
  const int n = 256;
  float *in, *scratch, *out;
  CHECK(cudaMallocManaged(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&scratch, n * sizeof(float)));
  CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  for (int i = 0; i < n; ++i) in[i] = float(i);
  smooth<<<1, n>>>(in, scratch, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("out[0] = %.1f\n", out[0]);
  CHECK(cudaFree(in));
  CHECK(cudaFree(scratch));
  CHECK(cudaFree(out));
  return 0;
}
