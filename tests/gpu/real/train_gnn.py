"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a graph neural network written with plain PyTorch, as people do without
PyG: GCN-style message passing with index_select on edge lists and
scatter_reduce/index_add_ to aggregate, degree normalisation, dropout, node
classification with a train mask, Adam, 300 epochs on a random graph of
20,000 nodes and 200,000 edges."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dev = torch.device("cuda")
N, E, FEAT, CLASSES = 20_000, 200_000, 64, 10
src = torch.randint(0, N, (E,), device=dev)
dst = torch.randint(0, N, (E,), device=dev)
loops = torch.arange(N, device=dev)
src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
deg = torch.zeros(N, device=dev).index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
norm = deg[src].rsqrt() * deg[dst].rsqrt()
x = torch.randn(N, FEAT, device=dev)
y = torch.randint(0, CLASSES, (N,), device=dev)
train_mask = torch.rand(N, device=dev) < 0.6


class GCNLayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout)

    def forward(self, h):
        h = self.lin(h)
        msg = h.index_select(0, src) * norm[:, None]
        out = torch.zeros_like(h)
        return out.index_add_(0, dst, msg)


class MaxPoolLayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout)

    def forward(self, h):
        h = F.relu(self.lin(h))
        msg = h.index_select(0, src)
        idx = dst[:, None].expand_as(msg)
        return torch.zeros_like(h).scatter_reduce(0, idx, msg, reduce="amax", include_self=False)


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = GCNLayer(FEAT, 128), MaxPoolLayer(128, 128), GCNLayer(128, CLASSES)

    def forward(self, h):
        h = F.dropout(F.relu(self.l1(h)), 0.5, self.training)
        h = F.dropout(self.l2(h), 0.5, self.training)
        return self.l3(h)


model = GNN().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(1, 301):
    model.train()
    opt.zero_grad()
    loss = F.cross_entropy(model(x)[train_mask], y[train_mask])
    loss.backward()
    opt.step()
    if epoch % 100 == 0:
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1)[~train_mask] == y[~train_mask]).float().mean()
        print(f"epoch {epoch} loss {loss.item():.4f} val acc {acc.item():.3f}", flush=True)
print("done")
