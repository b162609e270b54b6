"""Correct: a program that needs most of the GPU's memory. It fills
SHARE (default 0.6) of the GPU's total memory with ones, then runs three
training steps of a small MLP. Two copies of it do not fit on one GPU, so
cudawatch must run its stages one at a time (issue 23)."""
import os

import torch


def main():
    share = float(os.environ.get("SHARE", "0.6"))
    total = torch.cuda.get_device_properties(0).total_memory
    ballast = torch.ones(int(total * share) // 4, device="cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(3):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"held {ballast.numel() * 4 / 2**30:.1f} GiB; loss {float(model(x).sum()):.3f}")


if __name__ == "__main__":
    main()
