"""No bug: a few steps of a small MLP training loop on random data."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(256, 64, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
