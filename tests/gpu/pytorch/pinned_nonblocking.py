"""A correct program with pinned host memory and non_blocking copies, the
usual input pipeline: nothing here races (the copy is on the current
stream, ordered before the kernels that read it)."""
import torch

torch.manual_seed(0)
model = torch.nn.Linear(1024, 10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
host = torch.randn(8, 128, 1024).pin_memory()
for step in range(8):
    x = host[step].to("cuda", non_blocking=True)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"done loss {loss.item():.4f}")
