// Planted bug in a user's own kernel built the way CUTLASS builds every
// kernel: the user's operator inside CUTLASS's `cutlass::Kernel<Operator>`
// wrapper (include/cutlass/device_kernel.h, reproduced below as CUTLASS 3.x
// ships it, since the GPU machine has no CUTLASS headers). The kernel's
// name is `cutlass::Kernel<TileSum>`: a name-based library filter takes it
// for NVIDIA's. Each thread reads its neighbour's shared-memory slot with
// no barrier after the writes.
#include "../check.cuh"

namespace cutlass {
template <typename Operator>
__global__ void Kernel(typename Operator::Params params) {
  // Dynamic shared memory base pointer
  extern __shared__ int SharedStorageBase[];
  // Declare pointer to dynamic shared memory.
  typename Operator::SharedStorage *shared_storage =
      reinterpret_cast<typename Operator::SharedStorage *>(SharedStorageBase);
  Operator op;
  op(params, *shared_storage);
}
} // namespace cutlass

struct TileSum {
  struct Params {
    const float *in;
    float *out;
    int n;
  };
  struct SharedStorage {
    float tile[256];
  };
  __device__ void operator()(Params const &p, SharedStorage &s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s.tile[threadIdx.x] = i < p.n ? p.in[i] : 0.f;
    // BUG: missing __syncthreads();
    float right = s.tile[(threadIdx.x + 1) % blockDim.x];
    if (i < p.n) p.out[i] = s.tile[threadIdx.x] + right;
  }
};

int main() {
  const int n = 1 << 12;
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemset(in, 0, n * sizeof(float)));
  TileSum::Params params{in, out, n};
  cutlass::Kernel<TileSum><<<n / 256, 256, sizeof(TileSum::SharedStorage)>>>(params);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  std::puts("cutlass_style_race done");
  return 0;
}
