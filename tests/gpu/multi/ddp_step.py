"""Correct: a DistributedDataParallel training step on every rank over
NCCL, as `torchrun --nproc_per_node=2 ddp_step.py` starts it."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start()
model = model_on(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x, y = batch(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
