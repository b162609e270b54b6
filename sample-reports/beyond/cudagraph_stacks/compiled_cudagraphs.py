"""Correct: an MLP compiled with torch.compile(mode="reduce-overhead"):
Inductor's Triton kernels captured into CUDA graphs after a warm-up and
replayed, as inference servers run them."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 10)
    ).cuda().eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    total = 0.0
    with torch.no_grad():
        for step in range(6):
            x = torch.randn(32, 64, device="cuda")
            total += compiled(x).square().mean().item()
    print(f"total {total:.4f}")


if __name__ == "__main__":
    main()
