// Bug: a buffer is allocated and never written, then summed by a loop the
// compiler unrolls. initcheck reports one record per load instruction, 16
// addresses on one source line: one mistake, one site.
#include "../check.cuh"

__global__ void sum16(const float *in, float *out) {
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < 16; ++k) acc += in[threadIdx.x * 16 + k];  // BUG: in never written
  out[threadIdx.x] = acc;
}

int main() {
  float *in, *out;
  CHECK(cudaMalloc(&in, 32 * 16 * sizeof(float)));
  CHECK(cudaMalloc(&out, 32 * sizeof(float)));
  // BUG: no cudaMemcpy/cudaMemset into `in`
  sum16<<<1, 32>>>(in, out);
  CHECK(cudaGetLastError());
  float host[32];
  CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::printf("unrolled_uninit done %d\n", host[0] == host[0]);
  return 0;
}
