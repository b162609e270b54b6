"""Correct: a torch.compile'd MLP evaluated over 2000 batches, no
optimizer. At exit it prints Dynamo's counters (frames compiled, graph
breaks): `--steps N`'s model-call hooks must not break the compiled graph."""
import atexit

import torch


def counters():
    from torch._dynamo.utils import counters as c

    print("dynamo frames", dict(c["frames"]), "graph breaks", sum(c["graph_break"].values()))


def main():
    atexit.register(counters)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 10)
    ).cuda().eval()
    model = torch.compile(model)
    total = 0.0
    with torch.inference_mode():
        for batch in range(2000):
            total += model(torch.randn(64, 256, device="cuda")).sum().item()
    print(f"evaluated 2000 batches, sum {total:.1f}")


if __name__ == "__main__":
    main()
