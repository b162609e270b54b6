// One program, one fault per case (argv[1]): every record kind
// compute-sanitizer's manual lists for memcheck, racecheck, initcheck and
// synccheck that a program on one GPU can produce, each in a kernel of its
// own, for scripts/capture-records.sh (issue 59). Built as users build
// theirs: nvcc -lineinfo -arch=sm_90. Each case exits 0 when the CUDA call
// after its kernel succeeds and 1 with the error's text when it does not.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cg = cooperative_groups;

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e = (call);                                                      \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

// An indirect call to an address that holds no code: misaligned or out of
// the program's range ("Invalid PC" / "Out-of-range PC").
__global__ void call_address(unsigned long long address) {
  void (*f)() = reinterpret_cast<void (*)()>(address);
  f();
}

// A trap instruction: the kernel stops with an exception.
__global__ void trap_kernel(int *out) {
  if (threadIdx.x == 0) __trap();
  out[threadIdx.x] = 1;
}

// A breakpoint instruction with no debugger attached.
__global__ void breakpoint_kernel(int *out) {
  if (threadIdx.x == 0) asm volatile("brkpt;");
  out[threadIdx.x] = 1;
}

// An atomic on a local array through a generic pointer: atomics have no
// local address space ("Invalid address space").
__global__ void local_atomic(int *out, int index) {
  int local[8];
  for (int i = 0; i < 8; ++i) local[i] = i;
  volatile int *p = local + (index & 7);
  atomicAdd(const_cast<int *>(p), 1);
  out[threadIdx.x] = local[threadIdx.x & 7];
}

// A shared array written past its end.
__global__ void shared_past_end(int *out, int past) {
  __shared__ int tile[64];
  tile[threadIdx.x + past] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x & 63];
}

// A local array written far past its end.
__global__ void local_past_end(int *out, int past) {
  int local[16];
  for (int i = 0; i < 16; ++i) local[i] = i * threadIdx.x;
  local[past] = 7;
  out[threadIdx.x] = local[threadIdx.x & 15];
}

// A read through a null pointer.
__global__ void null_read(const int *p, int *out) { out[threadIdx.x] = p[threadIdx.x]; }

// Device-heap errors: a double free, a free of a pointer malloc never
// gave, an allocation never freed.
__global__ void double_free() {
  if (threadIdx.x != 0) return;
  void *p = malloc(64);
  free(p);
  free(p);
}
__global__ void free_invalid(int *out) {
  if (threadIdx.x != 0) return;
  free(out + 3);
}
__global__ void heap_leak(int **keep) {
  if (threadIdx.x != 0) return;
  *keep = static_cast<int *>(malloc(256));
  if (*keep != nullptr) (*keep)[0] = 1;
}

// __syncwarp with a mask that leaves out a thread that calls it (the
// synccheck sample's own pattern: "Invalid arguments").
__global__ void syncwarp_mask(int *out) {
  __shared__ int smem[32];
  int tx = threadIdx.x;
  unsigned mask = __ballot_sync(0xffffffff, tx < 16);
  if (tx <= 16) {
    smem[tx] = tx;
    __syncwarp(mask);
    out[tx] = smem[(tx + 1) & 15];
  }
}

// A cluster barrier reached by only some of the cluster's threads.
__global__ void __cluster_dims__(2, 1, 1) cluster_divergent(int *out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x < 16) cluster.sync();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Shared memory read after another thread's write with no barrier
// (RAW), written after another's read (WAR), written by two (WAW).
__global__ void shared_hazards(int *out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = t;
  out[t] = s[(t + 64) % 256];  // RAW: written by another warp, no barrier
  s[(t + 128) % 256] = out[t];  // WAR and WAW across warps
}

// A kernel that writes a quarter of its buffer (initcheck's unused memory).
__global__ void quarter(int *buffer) { buffer[threadIdx.x] = threadIdx.x; }

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "";
  int *out = nullptr;
  CHECK(cudaMalloc(&out, 4096 * sizeof(int)));
  CHECK(cudaMemset(out, 0, 4096 * sizeof(int)));
  if (!std::strcmp(c, "misaligned_pc")) call_address<<<1, 32>>>(0x3);
  else if (!std::strcmp(c, "out_of_range_pc")) call_address<<<1, 32>>>(0x7f0000000000ull);
  else if (!std::strcmp(c, "trap")) trap_kernel<<<1, 32>>>(out);
  else if (!std::strcmp(c, "breakpoint")) breakpoint_kernel<<<1, 32>>>(out);
  else if (!std::strcmp(c, "local_atomic")) local_atomic<<<1, 32>>>(out, argc);
  else if (!std::strcmp(c, "shared_past_end")) shared_past_end<<<1, 64>>>(out, 1 << 20);
  else if (!std::strcmp(c, "local_past_end")) local_past_end<<<1, 32>>>(out, 1 << 24);
  else if (!std::strcmp(c, "null_read")) null_read<<<1, 32>>>(nullptr, out);
  else if (!std::strcmp(c, "double_free")) double_free<<<1, 32>>>();
  else if (!std::strcmp(c, "free_invalid")) free_invalid<<<1, 32>>>(out);
  else if (!std::strcmp(c, "heap_leak")) {
    int **keep = nullptr;
    CHECK(cudaMalloc(&keep, sizeof(int *)));
    heap_leak<<<1, 32>>>(keep);
  } else if (!std::strcmp(c, "syncwarp_mask")) syncwarp_mask<<<1, 32>>>(out);
  else if (!std::strcmp(c, "cluster_divergent")) cluster_divergent<<<2, 32>>>(out);
  else if (!std::strcmp(c, "shared_hazards")) shared_hazards<<<1, 256>>>(out);
  else if (!std::strcmp(c, "unused_memory")) {
    int *buffer = nullptr;
    CHECK(cudaMalloc(&buffer, 1024 * sizeof(int)));
    quarter<<<1, 256>>>(buffer);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(buffer));
  } else {
    std::fprintf(stderr, "usage: records CASE\n");
    return 2;
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("%s: done\n", c);
  return 0;
}
