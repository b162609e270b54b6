"""No bug: work done by libraries' kernels, launched from the user's lines:
a large sort (CUB's radix sort) and attention forward and backward in bf16
(cuDNN's fused attention where PyTorch picks it)."""
import torch
import torch.nn.functional as F


def sort_step():
    keys = torch.randint(0, 1 << 30, (1 << 20,), device="cuda")
    return torch.sort(keys).values  # CUB DeviceRadixSort kernels


def attention_step():
    q, k, v = (torch.randn(2, 8, 256, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.sum().backward()
    return q.grad


def main():
    s = sort_step()
    g = attention_step()
    torch.cuda.synchronize()
    print("library_kernels done", bool(s[0] <= s[-1]), tuple(g.shape))


if __name__ == "__main__":
    main()
