"""sparse_race.py corrected: the side stream waits for the default
stream before it coalesces the sparse gradient. Under torch 2.11's CSAN
alone it still stops at the backward pass (a sparse tensor has no data
pointer to book); with cudawatch's hook it runs to its end, silent.
"""
import torch

torch.manual_seed(0)
emb = torch.nn.EmbeddingBag(10000, 64, mode="sum", sparse=True).cuda()
side = torch.cuda.Stream()
for step in range(3):
    idx = torch.randint(0, 10000, (4096,), device="cuda")
    offsets = torch.arange(0, 4096, 8, device="cuda")
    emb(idx, offsets).sum().backward()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        rows = emb.weight.grad.coalesce()
        norm = rows._values().norm()
    torch.cuda.current_stream().wait_stream(side)
    emb.weight.grad = None
    print(f"step {step} gradient rows {rows._nnz()} norm {norm.item():.3f}")
