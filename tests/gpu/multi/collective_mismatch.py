"""Bug on one rank: rank 1 skips the loss's all-reduce on its last step
(an early `continue` for a condition only its shard meets), so rank 0
waits in that all-reduce until the process group's timeout (40 s)."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start(timeout_s=40)
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x, y = batch(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 1 and step == 2:
        continue  # BUG: skips the collective every other rank enters
    log_loss(loss, rank, world, step)
finish()
