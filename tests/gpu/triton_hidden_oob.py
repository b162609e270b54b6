"""Planted bug: an unmasked Triton store writes 1024 floats into a tensor of 100.

PyTorch's caching allocator hands out slices of a larger cached block, so
memcheck sees an in-bounds write unless PYTORCH_NO_CUDA_MEMORY_CACHING=1.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def fill(ptr, value, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs, value)  # BUG: no mask, BLOCK > numel


def main():
    t = torch.zeros(100, device="cuda")
    fill[(1,)](t, 1.5, BLOCK=1024)
    torch.cuda.synchronize()
    print("sum", t.sum().item())


if __name__ == "__main__":
    main()
