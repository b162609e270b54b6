"""Correct: an MLP compiled with torch.compile (Inductor generates Triton
kernels), forward and backward."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 10)
    ).cuda()
    compiled = torch.compile(model)
    x = torch.randn(32, 64, device="cuda")
    loss = compiled(x).square().mean()
    loss.backward()
    torch.cuda.synchronize()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
