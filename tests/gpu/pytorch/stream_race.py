"""A stream race in a model step (the debugging guide's BAD example):
the batch is normalised on a side stream while the default stream is
still writing it, with no wait_stream or event between them. Exits 0;
CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer's racecheck do not see it
(racecheck looks at shared memory inside one kernel). PyTorch's CSAN does.
"""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
side = torch.cuda.Stream()

for step in range(3):
    raw = torch.empty(256, 512, device="cuda")
    raw.normal_()                          # default stream writes the batch
    with torch.cuda.stream(side):
        batch = (raw - raw.mean()) / raw.std()   # side stream reads it: no wait
    loss = torch.nn.functional.cross_entropy(model(batch), torch.zeros(256, dtype=torch.long, device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
