// A bug in the user's kernel that floods initcheck: every thread reads a
// buffer nobody wrote, 4 launches of 4 million threads, 16.8 million
// uninitialised reads. With call stacks the tool writes them one by one
// (hours); cudawatch stops the stage as a flood and runs it again without
// stacks, where each launch keeps its first 256 records: the site must
// still gate at line 11, its count a lower bound.
#include <cstdio>

__global__ void scale_uninit(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

int main() {
  const int n = 1 << 22;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  for (int k = 0; k < 4; ++k) scale_uninit<<<n / 256, 256>>>(in, out, n);
  cudaDeviceSynchronize();
  printf("uninit_flood done\n");
  cudaFree(in);
  cudaFree(out);
  return 0;
}
