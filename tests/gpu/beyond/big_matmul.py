"""No bug: large bf16 matrix products (cuBLAS's nvjet kernels on Hopper),
forward and backward."""
import torch


def main():
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        (a @ b).float().square().mean().backward()
    torch.cuda.synchronize()
    print("big_matmul done", tuple(a.grad.shape))


if __name__ == "__main__":
    main()
