"""A training loop that recovers from running out of memory the way the
debugging guide's checklist asks ("Test OOM recovery (reduce batch size)"):
it catches torch.OutOfMemoryError, frees what the failed step held, halves
its batch and goes on. Correct; it never runs out on a large GPU, so only
cudawatch's oom-recovery stage (memory capped below the measured peak)
shows that the recovery path works."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
batch, step = 128, 0
while step < 4:
    try:
        x = torch.randn(batch, 3, 224, 224, device="cuda")
        y = torch.randint(0, 10, (batch,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        print(f"step {step} batch {batch} loss {loss.item():.3f}", flush=True)
    except torch.OutOfMemoryError:
        x = y = loss = None
        opt.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        if batch == 1:
            raise
        batch //= 2
        print(f"out of memory: batch halved to {batch}", flush=True)
print("done")
