"""Bug on one rank: rank 1's labels are built with one class too many (a
shard whose label map is off by one), so the loss's device-side assert
fires there; rank 0 is left waiting in the gradients' all-reduce."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start(timeout_s=60)
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x, y = batch(device)
    if rank == 1:
        y = y + 1  # BUG: labels 1..10 for 10 classes
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
