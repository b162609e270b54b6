"""Correct: DistributedDataParallel with automatic mixed precision (float16
autocast and a GradScaler), as most multi-GPU training scripts run."""
import torch

from common import batch, finish, log_loss, model_on, start

rank, world, device = start()
model = model_on(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
for step in range(3):
    x, y = batch(device)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    log_loss(loss, rank, world, step)
finish()
