"""Bug on one rank: a custom CUDA kernel (load_inline) whose bounds check
is off by one, called only where the batch is ragged (rank 1's shard);
it writes one element past its output."""
import torch
from torch.utils.cpp_extension import load_inline

from common import finish, log_loss, model_on, start

CUDA = r"""
__global__ void scale_rows(float *x, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) {  // BUG: should be i < n
    x[i] *= s;
  }
}

torch::Tensor scale_rows_(torch::Tensor x, double s) {
  int n = x.numel();
  scale_rows<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n, (float)s);
  return x;
}
"""
CPP = "torch::Tensor scale_rows_(torch::Tensor x, double s);"

ext = load_inline("multi_scale_rows", cpp_sources=CPP, cuda_sources=CUDA, functions=["scale_rows_"],
                  extra_cuda_cflags=["-lineinfo"])
rank, world, device = start(timeout_s=60)
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    n = 64 if rank == 0 else 50  # rank 1's shard is ragged
    x = torch.randn(n, 128, device=device)
    y = torch.randint(0, 10, (n,), device=device)
    out = model(x)
    if n % 64:
        out = ext.scale_rows_(out.contiguous(), 0.5)
    loss = torch.nn.functional.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
