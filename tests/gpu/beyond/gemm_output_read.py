"""Correct: a matrix product (or a convolution, or attention) in the user's
code, then an elementwise add in the user's code reading its output. CASE
(argv[1]) picks the path: fp32 (cuBLAS's sm80 kernels), bf16 and fp16
(cuBLAS's Hopper `nvjet_sm90_*` kernels), conv16 (cuDNN, fp16, channels
last), sdpa (bf16 attention), triton (the bf16 product, then the user's own
Triton kernel adds 1). Nothing here reads memory it did not write: what
initcheck says about the add is what it can see of the writer."""
import sys

import torch


def add_one_triton(y):
    """The user's own kernel reading the product: out = y + 1."""
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = i < n
        tl.store(out_ptr + i, tl.load(x_ptr + i, mask=mask) + 1, mask=mask)

    out = torch.empty_like(y)
    add_one[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), BLOCK=1024)
    return out


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
    elif case == "triton":
        z = add_one_triton(x.bfloat16() @ w.bfloat16())
        torch.cuda.synchronize()
        print(case, "sum", float(z.float().sum()))
        return
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
