"""A copy of a buffer half written by ATen's fill kernel: D2H 4096 B, D2D (clone) 8192 B; a never-written buffer copied: 12288 B"""
import torch
def half_d2h(n):
    x = torch.empty(n // 4, device="cuda"); x[: n // 8].fill_(1); return x.cpu()
def half_d2d(n):
    x = torch.empty(n // 4, device="cuda"); x[: n // 8].fill_(1); return x.clone()
def never(n):
    return torch.empty(n // 4, device="cuda").cpu()
half_d2h(4096)
half_d2d(8192)
never(12288)
torch.cuda.synchronize(); print("done")
