"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a recommendation model as DLRM-style scripts write it: sparse
EmbeddingBags (sum pooling over variable-length bags given by offsets)
trained with SparseAdam, a dense MLP with Adam, pairwise dot-product
interaction, BCE on clicks, 500 steps, a log line every 100."""
import torch
import torch.nn as nn

torch.manual_seed(0)
dev = torch.device("cuda")
TABLES = [100_000, 50_000, 20_000, 5_000]
DIM, BATCH = 32, 512


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(n, DIM, mode="sum", sparse=True) for n in TABLES)
        self.bottom = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, DIM), nn.ReLU())
        n = len(TABLES) + 1
        self.top = nn.Sequential(nn.Linear(DIM + n * (n - 1) // 2, 128), nn.ReLU(), nn.Linear(128, 1))

    def forward(self, dense, bags):
        x = self.bottom(dense)
        feats = [x] + [emb(idx, off) for emb, (idx, off) in zip(self.emb, bags)]
        z = torch.stack(feats, dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))
        i, j = torch.triu_indices(z.shape[1], z.shape[1], offset=1, device=z.device)
        return self.top(torch.cat([x, inter[:, i, j]], dim=1)).squeeze(1)


def sample():
    dense = torch.randn(BATCH, 13, device=dev)
    bags = []
    for n in TABLES:
        lengths = torch.randint(1, 6, (BATCH,), device=dev)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long, device=dev), lengths.cumsum(0)[:-1]])
        idx = torch.randint(0, n, (int(lengths.sum()),), device=dev)
        bags.append((idx, offsets))
    clicks = (torch.rand(BATCH, device=dev) < 0.25).float()
    return dense, bags, clicks


model = DLRM().to(dev)
sparse_params = [p for m in model.emb for p in m.parameters()]
dense_params = list(model.bottom.parameters()) + list(model.top.parameters())
opt_sparse = torch.optim.SparseAdam(sparse_params, lr=1e-2)
opt_dense = torch.optim.Adam(dense_params, lr=1e-3)
loss_fn = nn.BCEWithLogitsLoss()
for step in range(1, 501):
    dense, bags, clicks = sample()
    loss = loss_fn(model(dense, bags), clicks)
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss.backward()
    opt_sparse.step()
    opt_dense.step()
    if step % 100 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
print("done")
