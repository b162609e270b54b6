"""A stream race on a sparse gradient: an EmbeddingBag with sparse=True
makes a sparse COO gradient on the default stream, and a side stream
coalesces it with no wait_stream between them. torch 2.11's CSAN alone
cannot book a sparse tensor (it has no data pointer) and stops the program
at the backward pass; with cudawatch's hook handing CSAN the gradient's
indices and values, the race is reported at the coalesce line. Exits 0
plainly.
"""
import torch

torch.manual_seed(0)
emb = torch.nn.EmbeddingBag(10000, 64, mode="sum", sparse=True).cuda()
side = torch.cuda.Stream()
for step in range(3):
    idx = torch.randint(0, 10000, (4096,), device="cuda")
    offsets = torch.arange(0, 4096, 8, device="cuda")
    emb(idx, offsets).sum().backward()      # default stream writes the sparse gradient
    with torch.cuda.stream(side):
        rows = emb.weight.grad.coalesce()   # side stream reads it: no wait
        norm = rows._values().norm()
    torch.cuda.current_stream().wait_stream(side)
    emb.weight.grad = None
    print(f"step {step} gradient rows {rows._nnz()} norm {norm.item():.3f}")
