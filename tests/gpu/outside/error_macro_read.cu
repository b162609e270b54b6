// The error macro most C and CUDA code carries: on failure it prints the
// file, the line and cudaGetErrorString()'s text, nothing else, and exits
// 1. The kernel, launched through a CUDA graph, reads through an index
// read from the data (one of them wild): error_macro.cu with a wild read
// instead of a wild write (under the core dump's settings an H200 let the
// wild write pass, docs/tool-surprises.md).
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

__global__ void gather(const int *index, const float *src, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[index[i]];  // BUG: index[] is trusted
}

int main() {
  const int n = 1024;
  int h_index[n];
  for (int i = 0; i < n; ++i) h_index[i] = i;
  h_index[700] = -(1 << 30);  // one wild index, 4 GiB before the buffer
  int *index;
  float *src, *out;
  CUDA_CHECK(cudaMalloc(&index, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&src, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(index, h_index, sizeof h_index, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  gather<<<n / 256, 256, 0, s>>>(index, src, out, n);
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  printf("done\n");
  return 0;
}
