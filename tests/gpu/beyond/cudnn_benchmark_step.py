"""Correct: the ResNet-18 step of tests/gpu/real/resnet_step.py with
`torch.backends.cudnn.benchmark = True`, as most training scripts set it:
cuDNN then times every candidate algorithm of each convolution shape on
its first use (many more kernel launches, once), and picks the fastest."""
import torch
import torchvision


def main():
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (4,), device="cuda")
    for _ in range(2):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
