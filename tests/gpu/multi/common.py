"""What every program of the multi-GPU corpus shares: a process group over
NCCL, one GPU per rank (LOCAL_RANK, as torchrun sets it), a small model in
DistributedDataParallel and a few optimizer steps. Each case file changes
one thing, on one rank, the way a user's bug would."""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def start(timeout_s=120):
    """The process group and this rank's GPU: (rank, world, device)."""
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=timeout_s),
                            device_id=torch.device("cuda", local))
    torch.manual_seed(0)
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local)


def model_on(device):
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    return DDP(model.to(device), device_ids=[device.index])


def batch(device, n=64):
    return torch.randn(n, 128, device=device), torch.randint(0, 10, (n,), device=device)


def log_loss(loss, rank, world, step):
    logged = loss.detach().clone()
    dist.all_reduce(logged)
    if rank == 0:
        print(f"step {step} loss {logged.item() / world:.4f}", flush=True)


def finish():
    dist.destroy_process_group()
