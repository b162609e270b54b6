"""Bug in the user's part: one training step of GPT-2 (124M, built from a
config with random weights; nothing is downloaded) with a batch too large
for the memory it may use (capped to emulate a smaller GPU), so the step
runs out of memory. The memory stage should name the line whose tensors
held the memory; no sanitizer can add anything to it."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.cuda.set_per_process_memory_fraction(0.08)  # about 6 GB of an H100
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config()).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 50257, (24, 512), device="cuda")  # BUG: batch too large
out = model(input_ids=ids, labels=ids)
out.loss.backward()
opt.step()
torch.cuda.synchronize()
print(f"loss {out.loss.item():.4f}")
