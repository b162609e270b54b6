// A correct kernel whose only ordering between a shared-memory write and
// its read goes through a third warp: warp 0 writes, then arrives at bar1;
// warp 1 waits on bar1, then arrives at bar2; warp 2 waits on bar2 and
// reads. racecheck sees this ordering only by tracking "indirect barrier
// dependencies" (on by default since 2024.4); the question it answers is
// what turning that tracking off for speed
// (NV_COMPUTE_SANITIZER_RACECHECK_INDIRECT_BARRIER_TRACKING=0) costs: a
// false hazard here, or none.
#include <cuda/barrier>
#include "../check.cuh"

__global__ void barrier_chain(int *out) {
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ int data[32];
  // libcu++'s own pattern: raw shared storage, constructed by init() below
  // (a __shared__ barrier object would need a dynamic initializer).
  __shared__ alignas(barrier) unsigned char storage[2][sizeof(barrier)];
  barrier &bar1 = *reinterpret_cast<barrier *>(storage[0]);
  barrier &bar2 = *reinterpret_cast<barrier *>(storage[1]);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    init(&bar1, 64);  // warps 0 and 1
    init(&bar2, 64);  // warps 1 and 2
  }
  __syncthreads();
  if (warp == 0) {
    data[lane] = lane * 3;
    bar1.arrive_and_wait();
  } else if (warp == 1) {
    bar1.arrive_and_wait();
    bar2.arrive_and_wait();
  } else {
    bar2.arrive_and_wait();
    out[lane] = data[lane];
  }
}

int main() {
  int *out, host[32];
  CHECK(cudaMalloc(&out, sizeof host));
  barrier_chain<<<1, 96>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    if (host[i] != i * 3) {
      std::printf("barrier_chain: out[%d] = %d, expected %d\n", i, host[i], i * 3);
      return 1;
    }
  CHECK(cudaFree(out));
  std::puts("barrier_chain done");
  return 0;
}
