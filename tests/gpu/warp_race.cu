// Planted bug: warp-synchronous shared memory without __syncwarp(). Each
// lane reads its neighbour's slot right after writing its own; on sm_70
// and later (independent thread scheduling) the lanes of a warp are not
// guaranteed to run in lockstep, so the read may come first. racecheck
// reports this as a *warning* (warp-level), yet it is a real bug.
#include "check.cuh"

__global__ void warp_race(int *out) {
  __shared__ int tile[32];
  tile[threadIdx.x] = threadIdx.x * 2;
  // BUG: missing __syncwarp();
  out[threadIdx.x] = tile[threadIdx.x ^ 1];
}

int main() {
  int *out;
  CHECK(cudaMalloc(&out, 32 * sizeof(int)));
  warp_race<<<1, 32>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(out));
  std::puts("warp_race done");
  return 0;
}
