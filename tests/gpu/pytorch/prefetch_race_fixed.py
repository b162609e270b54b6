"""The prefetcher of prefetch_race.py done right: the default stream waits
for the side stream before using the batch, and record_stream tells the
caching allocator that the default stream uses memory the side stream
allocated. Must come out clean."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())  # mean, std and the model are ready
host = [torch.randn(32, 3, 64, 64).pin_memory() for _ in range(4)]
labels = torch.randint(0, 10, (32,), device="cuda")


def prefetch(images):
    with torch.cuda.stream(side):
        batch = images.cuda(non_blocking=True)
        return (batch - mean) / std


nxt = prefetch(host[0])
for step in range(1, len(host) + 1):
    torch.cuda.current_stream().wait_stream(side)
    batch = nxt
    batch.record_stream(torch.cuda.current_stream())
    if step < len(host):
        nxt = prefetch(host[step])
    loss = torch.nn.functional.cross_entropy(model(batch), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
