"""A stream race in a real model step: the common CUDA data prefetcher,
which copies and normalises the next batch on a side stream while the
model trains on the current one, but forgets the wait: the training step
on the default stream reads the batch the side stream may still be
writing. Exits 0 and trains; only PyTorch's CSAN sees the race."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
side = torch.cuda.Stream()
host = [torch.randn(32, 3, 64, 64).pin_memory() for _ in range(4)]
labels = torch.randint(0, 10, (32,), device="cuda")


def prefetch(images):
    with torch.cuda.stream(side):
        batch = images.cuda(non_blocking=True)
        return (batch - mean) / std


nxt = prefetch(host[0])
for step in range(1, len(host) + 1):
    batch = nxt  # BUG: no torch.cuda.current_stream().wait_stream(side)
    if step < len(host):
        nxt = prefetch(host[step])
    loss = torch.nn.functional.cross_entropy(model(batch), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
