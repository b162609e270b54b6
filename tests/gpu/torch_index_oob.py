"""Planted bug: an index tensor holds 10 for a tensor of length 10.

PyTorch's index kernel trips a device-side assert; with
CUDA_LAUNCH_BLOCKING=1 the traceback points at the indexing line.
"""
import torch


def gather(x, idx):
    return x[idx]  # BUG: idx contains 10, x has 10 elements


def main():
    x = torch.arange(10, device="cuda", dtype=torch.float32)
    idx = torch.tensor([0, 3, 10], device="cuda")
    y = gather(x, idx)
    print(y.sum().item())


if __name__ == "__main__":
    main()
