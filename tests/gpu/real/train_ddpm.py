"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a denoising diffusion (DDPM) training loop as tutorials write it: a
small UNet with sinusoidal timestep embeddings and GroupNorm, a linear beta
schedule, noise prediction with MSE, AdamW, an EMA copy of the weights, bf16
autocast, 300 steps on random 32x32 images, then 20 sampling steps."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

device = "cuda"
torch.manual_seed(0)
T = 1000
betas = torch.linspace(1e-4, 0.02, T, device=device)
alphas = 1.0 - betas
alpha_bar = torch.cumprod(alphas, dim=0)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=1)


class Block(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2, self.conv2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(t)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, ch=64, tdim=128):
        super().__init__()
        self.tdim = tdim
        self.tmlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inc = nn.Conv2d(3, ch, 3, padding=1)
        self.d1, self.d2 = Block(ch, ch, tdim), Block(ch, ch * 2, tdim)
        self.mid = Block(ch * 2, ch * 2, tdim)
        self.u2, self.u1 = Block(ch * 4, ch, tdim), Block(ch * 2, ch, tdim)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        t = self.tmlp(timestep_embedding(t, self.tdim))
        h0 = self.inc(x)
        h1 = self.d1(h0, t)
        h2 = self.d2(F.avg_pool2d(h1, 2), t)
        m = self.mid(F.avg_pool2d(h2, 2), t)
        u = self.u2(torch.cat([F.interpolate(m, scale_factor=2), h2], 1), t)
        u = self.u1(torch.cat([F.interpolate(u, scale_factor=2), h1], 1), t)
        return self.out(F.silu(u))


model = UNet().to(device)
ema = copy.deepcopy(model).eval().requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
for step in range(1, 301):
    x0 = torch.rand(32, 3, 32, 32, device=device) * 2 - 1
    t = torch.randint(0, T, (32,), device=device)
    noise = torch.randn_like(x0)
    ab = alpha_bar[t][:, None, None, None]
    xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.mse_loss(model(xt, t).float(), noise)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.lerp_(pm, 1 - 0.999)
    if step % 100 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)

with torch.no_grad():
    x = torch.randn(8, 3, 32, 32, device=device)
    for i in reversed(range(0, T, T // 20)):
        t = torch.full((8,), i, device=device, dtype=torch.long)
        eps = ema(x, t)
        x = (x - betas[i] / (1 - alpha_bar[i]).sqrt() * eps) / alphas[i].sqrt()
        if i > 0:
            x = x + betas[i].sqrt() * torch.randn_like(x)
print("sampled", tuple(x.shape), f"{x.std().item():.3f}")
