"""Planted bug: one allocation asks for far more memory than the GPU has."""
import torch


def main():
    keep = torch.empty(256 * 1024 * 1024, device="cuda")  # 1 GiB held
    huge = torch.empty(1 << 40, device="cuda")  # BUG: 4 TiB of float32
    print(keep.numel() + huge.numel())


if __name__ == "__main__":
    main()
