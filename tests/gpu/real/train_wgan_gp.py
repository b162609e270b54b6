"""Correct (an outside check, written 2026-11-29 and run before any change for
it): wGAN-GP as its paper's reference code trains it: a critic updated five
times per generator update, a gradient penalty through
torch.autograd.grad(create_graph=True) (a double backward), Adam with betas
(0.0, 0.9), 200 generator iterations on random 32x32 images."""
import torch
import torch.nn as nn
from torch import autograd

device = "cuda"
torch.manual_seed(0)
Z, LAMBDA, N_CRITIC, BATCH = 128, 10.0, 5, 64

G = nn.Sequential(
    nn.Linear(Z, 4 * 4 * 256), nn.ReLU(True), nn.Unflatten(1, (256, 4, 4)),
    nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.ReLU(True),
    nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(True),
    nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh(),
).to(device)
D = nn.Sequential(
    nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
    nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
    nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2),
    nn.Flatten(), nn.Linear(4 * 4 * 256, 1),
).to(device)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))


def gradient_penalty(real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = D(mixed)
    grads = autograd.grad(outputs=scores, inputs=mixed, grad_outputs=torch.ones_like(scores),
                          create_graph=True, retain_graph=True)[0]
    return ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()


for it in range(200):
    for _ in range(N_CRITIC):
        real = torch.rand(BATCH, 3, 32, 32, device=device) * 2 - 1
        fake = G(torch.randn(BATCH, Z, device=device)).detach()
        d_loss = D(fake).mean() - D(real).mean() + LAMBDA * gradient_penalty(real, fake)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
    g_loss = -D(G(torch.randn(BATCH, Z, device=device))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if it % 50 == 0:
        print(f"iter {it} d_loss {d_loss.item():.3f} g_loss {g_loss.item():.3f}", flush=True)
print("done")
