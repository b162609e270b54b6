// Planted race within one block: each thread writes its slot of a global
// scratch buffer, then reads its neighbour's slot with no __syncthreads()
// between (racecheck's classic, in global memory, where racecheck does not
// look). Expected: a global race between the store and the load.
#include "../check.cuh"

__global__ void smooth(const float *in, float *scratch, float *out) {
  int t = threadIdx.x;
  scratch[t] = in[t] * 0.5f;  // RACE: write
  // BUG: missing __syncthreads();
  out[t] = scratch[t] + scratch[(t + 1) % blockDim.x];  // RACE: read
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
