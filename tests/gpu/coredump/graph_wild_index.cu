// Planted bug: one of 40 kernels of a CUDA graph writes through a wild
// index; the graph is launched 50 times. Plainly the error surfaces at the
// synchronize after the graph (or, with CUDA_LAUNCH_BLOCKING=1, at
// cudaGraphLaunch): no kernel is named. The GPU core dump names scatter and
// its line.
#include "../check.cuh"

__global__ void scale(float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

__global__ void scatter(const int *idx, const float *src, float *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[idx[i]] = src[i];  // BUG: idx holds one wild entry
}

int main() {
  const int n = 1 << 16, threads = 256, blocks = (n + threads - 1) / threads;
  int *idx;
  float *src, *dst;
  CHECK(cudaMalloc(&idx, n * sizeof(int)));
  CHECK(cudaMalloc(&src, n * sizeof(float)));
  CHECK(cudaMalloc(&dst, n * sizeof(float)));
  int *host = new int[n];
  for (int i = 0; i < n; ++i) host[i] = (i == 4321) ? 0x3fffffff : n - 1 - i;
  CHECK(cudaMemcpy(idx, host, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(src, 0, n * sizeof(float)));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < 40; ++k) {
    if (k == 27)
      scatter<<<blocks, threads, 0, stream>>>(idx, src, dst, n);
    else
      scale<<<blocks, threads, 0, stream>>>(dst, 0.5f, n);
  }
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int it = 0; it < 50; ++it) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::puts("graph_wild_index done");
  return 0;
}
