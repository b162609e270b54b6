// The error macro most C and CUDA code carries: on failure it prints the
// file, the line and cudaGetErrorString()'s text, nothing else, and exits
// 1. The kernel, launched through a CUDA graph, writes through an index
// read from the data (one of them wild).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                   \
  do {                                                                     \
    cudaError_t e = (call);                                                \
    if (e != cudaSuccess) {                                                \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

__global__ void scatter(const int *index, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[index[i]] = 1.0f;  // BUG: index[] is trusted
}

int main() {
  const int n = 1024;
  int h_index[n];
  for (int i = 0; i < n; ++i) h_index[i] = i;
  h_index[700] = -(1 << 30);  // one wild index, 4 GiB before the buffer
  int *index;
  float *out;
  CUDA_CHECK(cudaMalloc(&index, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(index, h_index, sizeof h_index, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scatter<<<n / 256, 256, 0, s>>>(index, out, n);
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  printf("done\n");
  return 0;
}
