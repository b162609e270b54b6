"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a mixture-of-experts transformer block trained on a language-model
objective, routing written by hand as small MoE repos do: a top-2 softmax
router, tokens sorted by expert (argsort, bincount), per-expert MLPs on
their slices, index_add_ back with the gate weights, a load-balancing
auxiliary loss, bf16 autocast, fused AdamW, 200 steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
dev = "cuda"
VOCAB, D, EXPERTS, TOPK, SEQ, B = 4096, 256, 8, 2, 128, 16


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, D, 4 * D) * 0.02)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, 4 * D, D) * 0.02)

    def forward(self, x):
        tokens = x.reshape(-1, D)
        probs = self.router(tokens).float().softmax(-1)
        gate, expert = probs.topk(TOPK, dim=-1)
        gate = gate / gate.sum(-1, keepdim=True)
        flat_expert = expert.reshape(-1)
        order = flat_expert.argsort()
        counts = torch.bincount(flat_expert, minlength=EXPERTS).tolist()
        token_of = torch.arange(tokens.size(0), device=x.device).repeat_interleave(TOPK)[order]
        out = torch.zeros_like(tokens)
        start = 0
        for e, n in enumerate(counts):
            if n:
                idx = token_of[start:start + n]
                h = F.gelu(tokens[idx] @ self.w1[e]) @ self.w2[e]
                w = gate.reshape(-1)[order[start:start + n]].unsqueeze(1).to(h.dtype)
                out.index_add_(0, idx, (h * w).to(out.dtype))
            start += n
        frac = torch.bincount(flat_expert, minlength=EXPERTS).float() / flat_expert.numel()
        aux = EXPERTS * (frac * probs.mean(0)).sum()
        return out.reshape_as(x), aux


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.attn = nn.MultiheadAttention(D, 8, batch_first=True)
        self.n1, self.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.moe = MoE()
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        x = self.emb(ids)
        mask = torch.triu(torch.ones(ids.size(1), ids.size(1), device=ids.device, dtype=torch.bool), 1)
        h = self.n1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        m, aux = self.moe(self.n2(x))
        return self.head(x + m), aux


model = Model().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
for step in range(1, 201):
    ids = torch.randint(0, VOCAB, (B, SEQ + 1), device=dev)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits, aux = model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB).float(), ids[:, 1:].reshape(-1)) + 0.01 * aux
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.3f}", flush=True)
print("done")
