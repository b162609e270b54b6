"""A correct training step that runs out of memory because another process
holds most of the GPU (scripts/capture-pytorch-instruments.sh starts
tests/gpu/pytorch/hold_memory.py first, as another job on a shared GPU
would). Nothing in this program is wrong: the report must say who held the
memory."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    x = torch.randn(4096, 4096, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done")
