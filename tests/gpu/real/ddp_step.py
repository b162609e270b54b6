"""Correct: a DistributedDataParallel training step on one GPU over NCCL,
as training scripts start it: `python3 ddp_step.py` spawns its one worker
(torch.multiprocessing.spawn, MASTER_PORT set by the script), and
`torchrun --nproc_per_node=1 ddp_step.py` starts it itself. The loss is
all-reduced for logging, as multi-GPU scripts do."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world):
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = DDP(model.cuda(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(3):
        x = torch.randn(64, 128, device="cuda")
        y = torch.randint(0, 10, (64,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        logged = loss.detach().clone()
        dist.all_reduce(logged)
        if rank == 0:
            print(f"step {step} loss {logged.item() / world:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    if "LOCAL_RANK" in os.environ:  # started by torchrun
        worker(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29512")
        mp.spawn(worker, args=(1,), nprocs=1)
