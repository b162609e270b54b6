"""Planted bug: a Triton kernel gathers through an index it never checks,
captured in a torch.cuda.CUDAGraph and replayed. The index tensor gets one
wild entry after capture, so the fault happens inside graph.replay(): the
plain run's error surfaces later, at a synchronize, with no kernel named."""
import torch
import triton
import triton.language as tl


@triton.jit
def gather(idx_ptr, src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    j = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.load(src_ptr + j, mask=mask)  # BUG: j is never checked against n
    tl.store(out_ptr + offs, v * 2.0, mask=mask)


def step(idx, src, out):
    n = out.numel()
    gather[(triton.cdiv(n, 1024),)](idx, src, out, n, BLOCK=1024)
    return out.sum()


n = 1 << 20
idx = torch.randint(0, n, (n,), device="cuda")
src = torch.randn(n, device="cuda")
out = torch.empty(n, device="cuda")

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        step(idx, src, out)
torch.cuda.current_stream().wait_stream(side)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    total = step(idx, src, out)

idx[777] = 1 << 36  # the data replayed below points far outside src
for _ in range(10):
    graph.replay()
print("sum", total.item())
