"""A real model whose backward pass runs out of memory because the batch
is too large (torchvision's ResNet-18, memory capped to emulate a small GPU)."""
import torch
import torchvision

torch.cuda.set_per_process_memory_fraction(0.05)  # about 4 GB of an H100
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch = 512
x = torch.randn(batch, 3, 224, 224, device="cuda")
y = torch.randint(0, 10, (batch,), device="cuda")
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()
opt.step()
print("done")
