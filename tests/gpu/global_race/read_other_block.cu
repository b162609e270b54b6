// Planted race: block 0 fills a buffer, block 1 reads it in the same launch
// with nothing ordering the two (no grid sync, no flag): block 1 may read
// before block 0 wrote. Expected: a global race between the store (block 0)
// and the load (block 1), both lines named.
#include "../check.cuh"

__global__ void produce_then_consume(float *buf, float *out, int n) {
  int t = threadIdx.x;
  if (blockIdx.x == 0) {
    for (int i = t; i < n; i += blockDim.x) {
      buf[i] = float(i) * 0.5f;  // RACE: write, block 0
    }
  } else {
    float sum = 0.0f;
    for (int i = t; i < n; i += blockDim.x) {
      sum += buf[i];  // RACE: read, block 1
    }
    out[t] = sum;
  }
}

int main() {
  const int n = 4096, threads = 128;
  float *buf, *out;
  CHECK(cudaMalloc(&buf, n * sizeof(float)));
  CHECK(cudaMallocManaged(&out, threads * sizeof(float)));
  CHECK(cudaMemset(buf, 0, n * sizeof(float)));
  produce_then_consume<<<2, threads>>>(buf, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("out[0] = %.1f\n", out[0]);
  CHECK(cudaFree(buf));
  CHECK(cudaFree(out));
  return 0;
}
