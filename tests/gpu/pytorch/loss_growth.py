"""The guide's leak: each step's loss is kept with its graph
(losses.append(loss) instead of loss.item()), so the memory still
allocated after each optimizer step grows until it runs out. The program
caps its own memory to emulate a small GPU cheaply."""
import torch

torch.cuda.set_per_process_memory_fraction(0.02)  # about 1.6 GB of an H100
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
losses = []
for step in range(200):
    x = torch.randn(512, 2048, device="cuda")
    out = model(x)
    loss = out.square().mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    losses.append(out)  # keeps the activations (and graph) of every step
    print(f"step {step} allocated {torch.cuda.memory_allocated() >> 20} MiB", flush=True)
