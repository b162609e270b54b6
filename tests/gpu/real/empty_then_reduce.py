"""Bug in the user's part: a buffer from torch.empty is only half filled,
then summed: the reduction kernel (ATen's) reads memory nobody wrote."""
import torch


def main():
    buf = torch.empty(1024, device="cuda")
    buf[:512] = 1.0  # BUG: the other half is never written
    total = buf.sum()
    torch.cuda.synchronize()
    print("total", total.item())


if __name__ == "__main__":
    main()
