"""Bug in the user's part of an ordinary training script: an MLP trained
for 300 Adam steps whose activation is the user's own Triton kernel (a
scaled ReLU with its backward), and the forward kernel stores without a
mask, so every step's last block writes past the activation's end. The
program runs to its end and prints a falling loss."""
import torch
import triton
import triton.language as tl


@triton.jit
def scaled_relu_fwd(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * 2.0)  # BUG: no mask=offs < n


@triton.jit
def scaled_relu_bwd(x_ptr, g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.where(x > 0, g * 2.0, 0.0), mask=mask)


class ScaledReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scaled_relu_fwd[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        out = torch.empty_like(x)
        n = x.numel()
        scaled_relu_bwd[(triton.cdiv(n, 1024),)](x, grad.contiguous(), out, n, BLOCK=1024)
        return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(128, 300)
        self.fc2 = torch.nn.Linear(300, 10)

    def forward(self, x):
        return self.fc2(ScaledReLU.apply(self.fc1(x)))


def main():
    torch.manual_seed(0)
    net = Net().cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(1, 301):
        x = torch.randn(7, 128, device="cuda")  # 7 x 300 activations: the last block of 1024 overruns
        y = (x[:, 0] > 0).long()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    print("done")


if __name__ == "__main__":
    main()
