"""Correct: a model sharded with FSDP (`fully_shard`, PyTorch's second
FSDP) over NCCL, bf16 parameters gathered for compute and gradients
reduce-scattered, as sharded training scripts run it."""
import torch
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

from common import batch, finish, log_loss, start

rank, world, device = start()
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                            torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer, mp_policy=policy)
fully_shard(model, mp_policy=policy)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = batch(device)
    loss = torch.nn.functional.cross_entropy(model(x).float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_loss(loss, rank, world, step)
finish()
