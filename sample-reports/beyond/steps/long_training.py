"""Correct: a training script that runs for a while, as users' scripts do:
an MLP trained on synthetic data through a DataLoader (two workers) for
2000 optimizer steps, then evaluated. Under the sanitizers each step costs
tens of times its plain time; `cudawatch run --steps N` checks the first N."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(2000 * 64, 128)
    y = (x[:, :10].sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, num_workers=2)
    model = torch.nn.Sequential(
        torch.nn.Linear(128, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 2),
    ).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    steps = 0
    for xb, yb in loader:
        xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        steps += 1
        if steps % 500 == 0:
            print(f"step {steps} loss {loss.item():.4f}", flush=True)
    with torch.no_grad():
        accuracy = (model(x[:4096].cuda()).argmax(dim=1).cpu() == y[:4096]).float().mean()
    print(f"trained {steps} steps, accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
