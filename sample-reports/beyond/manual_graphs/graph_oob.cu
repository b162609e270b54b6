// A bug inside a CUDA graph: the kernel is captured into a graph with
// cudaStreamBeginCapture and launched with cudaGraphLaunch, and writes one
// block past its buffer (the grid is rounded up, the kernel has no bound
// check). memcheck must name the kernel's line and the graph launch.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = a * x[i];  // BUG: no `if (i < n)`
}

int main() {
  const int n = 1000;
  float *x;
  cudaMalloc(&x, n * sizeof(float));
  cudaMemset(x, 0, n * sizeof(float));
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  scale<<<(n + 255) / 256, 256, 0, s>>>(x, 2.0f);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  for (int r = 0; r < 3; r++) cudaGraphLaunch(exec, s);
  cudaError_t e = cudaStreamSynchronize(s);
  printf("sync: %s\n", cudaGetErrorString(e));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(x);
  return e == cudaSuccess ? 0 : 1;
}
