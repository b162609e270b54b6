// A host loop that retries a pass until the device says every item was
// handled: each pass resets the count, launches the kernel and reads the
// count back. The kernel reads one block past its 1000 items (the grid is
// rounded up, the read has no bound check). Plainly the stray reads land in
// the allocation's slack and every pass handles all items: one pass, exit 0.
// Under compute-sanitizer's default the first invalid read ends the
// context, the copy back fails and the program exits 1 at once. Under
// kernel-level recovery (`--destroy-on-device-error kernel`, cudawatch's
// default) each pass's kernel is ended at its fault, the count never
// reaches zero, and the program retries until something stops it: the
// loop cudawatch's repeat watch must end.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void handle(const int *items, int n, int *remaining) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int item = items[i];  // BUG: no `if (i < n)` before the read
  if (i < n && item >= 0) atomicSub(remaining, 1);
}

int main() {
  const int n = 1000;
  int *items, *remaining;
  cudaMalloc(&items, n * sizeof(int));
  cudaMalloc(&remaining, sizeof(int));
  cudaMemset(items, 0, n * sizeof(int));
  long passes = 0;
  int left = n;
  while (left != 0 && passes < 10000000) {
    cudaMemcpy(remaining, &n, sizeof(int), cudaMemcpyHostToDevice);
    handle<<<(n + 255) / 256, 256>>>(items, n, remaining);
    cudaError_t e = cudaMemcpy(&left, remaining, sizeof(int), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
      printf("pass %ld: %s\n", passes, cudaGetErrorString(e));
      return 1;
    }
    passes++;
  }
  printf("all %d items handled in %ld passes\n", n, passes);
  cudaFree(items);
  cudaFree(remaining);
  return 0;
}
