"""torch.compile under PyTorch's CUDA sanitizer: a compiled function reads
a tensor that a side stream is still writing (no wait between them), a
race between streams. Prints what Dynamo and Inductor did, to see whether
the compiled code ran (Inductor's Triton kernels, which CSAN's dispatch
mode does not see) or ran eagerly (Dynamo skips frames while a torch
dispatch mode is active)."""
import torch


def scaled_sum(a, b):
    return (a * 2 + b).relu().sum(dim=0)


def main():
    compiled = torch.compile(scaled_sum)
    side = torch.cuda.Stream()
    x = torch.randn(1024, 1024, device="cuda")
    y = torch.randn_like(x)
    compiled(x, y)
    torch.cuda.synchronize()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.mul_(3)  # the side stream writes x ...
    out = compiled(x, y)  # ... while the default stream reads it: a race
    torch.cuda.synchronize()
    print(f"sum {out.sum().item():.1f}")
    from torch._dynamo.utils import counters

    print("dynamo counters", {k: dict(v) for k, v in counters.items() if v})
    try:
        from torch._inductor import metrics

        print("inductor generated kernels", metrics.generated_kernel_count)
    except Exception as error:  # noqa: BLE001
        print("inductor metrics unavailable", error)


if __name__ == "__main__":
    main()
