"""Bug in the user's part: a custom Triton activation inside a real model
stores without a mask, so the last block writes past the tensor's end."""
import torch
import triton
import triton.language as tl


@triton.jit
def scaled_relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * 2.0)  # BUG: no mask=offs < n


class Act(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        scaled_relu[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
        return out


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 100), Act(), torch.nn.Linear(100, 10)).cuda()
    x = torch.randn(3, 64, device="cuda")  # 300 activations: the last block of 256 overruns
    with torch.no_grad():
        y = model(x)
    torch.cuda.synchronize()
    print("sum", y.sum().item())


if __name__ == "__main__":
    main()
