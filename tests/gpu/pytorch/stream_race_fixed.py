"""The corrected twin of stream_race.py: the side stream waits for the
default stream, and the default stream waits for the side stream's result
(record_stream keeps the allocator from reusing the batch too early)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
side = torch.cuda.Stream()

for step in range(3):
    raw = torch.empty(256, 512, device="cuda")
    raw.normal_()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        batch = (raw - raw.mean()) / raw.std()
    raw.record_stream(side)
    torch.cuda.current_stream().wait_stream(side)
    batch.record_stream(torch.cuda.current_stream())
    loss = torch.nn.functional.cross_entropy(model(batch), torch.zeros(256, dtype=torch.long, device="cuda"))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
