"""Bug in the user's part: a custom CUDA kernel (load_inline) whose bounds
check is off by one, called from a model's forward."""
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void add_bias(float *x, const float *bias, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) {  // BUG: should be i < n
    x[i] += bias[i % cols];
  }
}

torch::Tensor add_bias_(torch::Tensor x, torch::Tensor bias) {
  int n = x.numel();
  add_bias<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), bias.data_ptr<float>(), n, bias.numel());
  return x;
}
"""
CPP = "torch::Tensor add_bias_(torch::Tensor x, torch::Tensor bias);"


def main():
    ext = load_inline("user_ext", cpp_sources=CPP, cuda_sources=CUDA, functions=["add_bias_"],
                      extra_cuda_cflags=["-lineinfo"])
    torch.manual_seed(0)
    x = torch.randn(4, 50, device="cuda")  # 200 elements: thread 200 writes one past the end
    bias = torch.randn(50, device="cuda")
    ext.add_bias_(x, bias)
    torch.cuda.synchronize()
    print("sum", x.sum().item())


if __name__ == "__main__":
    main()
