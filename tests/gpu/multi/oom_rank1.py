"""Bug on one rank: rank 1 keeps every step's activations for a debug
dump it never writes, and asks for far more than its GPU holds."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start(timeout_s=60)
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
kept = []
for step in range(3):
    x, y = batch(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    if rank == 1:
        kept.append(torch.empty(200 * 2**30, dtype=torch.uint8, device=device))  # BUG: 200 GiB
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
