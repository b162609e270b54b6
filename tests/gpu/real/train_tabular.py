"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a tabular classifier as people write one for a dataset that fits on the
GPU: 100,000 rows of 13 numeric features and 7 classes, standardised on the
GPU with the training rows' mean and standard deviation, an MLP with
BatchNorm and dropout, AdamW with a cosine schedule, shuffled mini-batches
by randperm, per-class accuracy on a held-out split every 100 steps, 500
steps."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dev = torch.device("cuda")
ROWS, FEATURES, CLASSES, BATCH, STEPS = 100_000, 13, 7, 512, 500

# A synthetic dataset with a learnable rule: each class a shifted cluster.
y_all = torch.randint(0, CLASSES, (ROWS,), device=dev)
centres = torch.randn(CLASSES, FEATURES, device=dev) * 2
X_all = centres[y_all] + torch.randn(ROWS, FEATURES, device=dev) * 3 + 10
split = int(ROWS * 0.8)
X_train, y_train = X_all[:split], y_all[:split]
X_val, y_val = X_all[split:], y_all[split:]

mean, std = X_train.mean(0), X_train.std(0)
X_train = (X_train - mean) / std
X_val = (X_val - mean) / std

model = nn.Sequential(
    nn.Linear(FEATURES, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.1),
    nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.1),
    nn.Linear(256, CLASSES),
).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / STEPS)))

order = torch.randperm(split, device=dev)
cursor = 0
for step in range(1, STEPS + 1):
    if cursor + BATCH > split:
        order, cursor = torch.randperm(split, device=dev), 0
    idx = order[cursor:cursor + BATCH]
    cursor += BATCH
    model.train()
    loss = F.cross_entropy(model(X_train[idx]), y_train[idx])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    if step % 100 == 0:
        model.eval()
        with torch.no_grad():
            pred = model(X_val).argmax(1)
            hits = F.one_hot(y_val, CLASSES) * (pred == y_val)[:, None]
            per_class = hits.sum(0) / F.one_hot(y_val, CLASSES).sum(0)
        print(f"step {step} loss {loss.item():.4f} per-class acc "
              + " ".join(f"{a:.2f}" for a in per_class.tolist()), flush=True)
print("done")
