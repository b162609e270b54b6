"""The same training loop without a recovery path: correct on this GPU,
but an out-of-memory error on a smaller one ends it. cudawatch's
oom-recovery stage must say so, at the line that asked for the memory."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
batch = 128
for step in range(4):
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
print("done")
