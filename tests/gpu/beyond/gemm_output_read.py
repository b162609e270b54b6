"""Correct: a matrix product (or a convolution, or attention) in the user's
code, then an elementwise add in the user's code reading its output. CASE
(argv[1]) picks the path: fp32 (cuBLAS's sm80 kernels), bf16 and fp16
(cuBLAS's Hopper `nvjet_sm90_*` kernels), conv16 (cuDNN, fp16, channels
last), sdpa (bf16 attention). Nothing here reads memory it did not write:
what initcheck says about the add is what it can see of the writer."""
import sys

import torch


def main(case):
    torch.manual_seed(0)
    n = 128
    x = torch.randn(n, n, device="cuda")
    w = torch.randn(n, n, device="cuda")
    if case == "fp32":
        y = x @ w
    elif case == "bf16":
        y = x.bfloat16() @ w.bfloat16()
    elif case == "fp16":
        y = x.half() @ w.half()
    elif case == "conv16":
        img = torch.randn(8, 64, 32, 32, device="cuda").half().to(memory_format=torch.channels_last)
        k = torch.randn(64, 64, 3, 3, device="cuda").half().to(memory_format=torch.channels_last)
        y = torch.nn.functional.conv2d(img, k, padding=1)
    elif case == "sdpa":
        q = torch.randn(4, 8, 256, 64, device="cuda").bfloat16()
        y = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    else:
        sys.exit(f"unknown case {case}")
    z = y + 1
    torch.cuda.synchronize()
    print(case, "sum", float(z.float().sum()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bf16")
