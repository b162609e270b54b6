"""Bug in the user's part of the tabular script of train_tabular.py: the
feature matrix is allocated with one column more than the features written
into it (an engineered feature meant to be appended was never filled in), so
the standardisation's mean reads a column nobody wrote, in every row."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dev = torch.device("cuda")
ROWS, FEATURES, CLASSES, BATCH, STEPS = 100_000, 13, 7, 512, 300

y = torch.randint(0, CLASSES, (ROWS,), device=dev)
raw = torch.randn(CLASSES, FEATURES, device=dev)[y] + torch.randn(ROWS, FEATURES, device=dev)
X = torch.empty(ROWS, FEATURES + 1, device=dev)
X[:, :FEATURES] = raw  # BUG: column FEATURES (the ratio feature) is never written
mean, std = X.mean(0), X.std(0)
X = torch.nan_to_num((X - mean) / std)

model = nn.Sequential(nn.Linear(FEATURES + 1, 128), nn.ReLU(), nn.Linear(128, CLASSES)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(1, STEPS + 1):
    idx = torch.randint(0, ROWS, (BATCH,), device=dev)
    loss = F.cross_entropy(model(X[idx]), y[idx])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
print("done")
