"""Two ranks of a DistributedDataParallel program on one GPU (gloo, so
that both may share it), started as training scripts start them
(torch.multiprocessing.spawn). With LEAK=1, rank 1 keeps every step's
loss with its graph (the classic leak: a list of losses for logging),
so its memory grows by the step's activations; rank 0 holds more memory
but stays flat. Both print their steps."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 12


def worker(rank, world, leak):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    layers = [torch.nn.Linear(1024, 1024) for _ in range(4)]
    model = DDP(torch.nn.Sequential(*layers).cuda(), device_ids=[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    ballast = torch.empty(256 << 20, dtype=torch.uint8, device="cuda") if rank == 0 else None
    losses = []
    for step in range(STEPS):
        x = torch.randn(512, 1024, device="cuda")
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward(retain_graph=leak and rank == 1)
        opt.step()
        losses.append(loss if leak and rank == 1 else loss.item())
    torch.cuda.synchronize()
    print(f"rank {rank} steps {STEPS} ballast {ballast is not None}")
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    mp.spawn(worker, args=(2, os.environ.get("LEAK") == "1"), nprocs=2)
