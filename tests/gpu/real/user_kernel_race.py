"""Bug in the user's part: a custom CUDA reduction (load_inline) that
reads shared memory before the other threads' writes are synchronised."""
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void block_sum(const float *x, float *out) {
  __shared__ float s[256];
  s[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
  // BUG: missing __syncthreads() before reading the neighbours' values
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 256; ++i) t += s[i];
    out[blockIdx.x] = t;
  }
}

torch::Tensor block_sums(torch::Tensor x) {
  auto out = torch::empty({x.numel() / 256}, x.options());
  block_sum<<<x.numel() / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>());
  return out;
}
"""
CPP = "torch::Tensor block_sums(torch::Tensor x);"


def main():
    ext = load_inline("user_race", cpp_sources=CPP, cuda_sources=CUDA, functions=["block_sums"],
                      extra_cuda_cflags=["-lineinfo"])
    x = torch.ones(1024, device="cuda")
    print("sums", ext.block_sums(x).tolist())


if __name__ == "__main__":
    main()
