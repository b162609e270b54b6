"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a segmentation script: a small UNet written by hand, channels-last,
bf16 autocast, BCE + Dice loss, AdamW with a cosine schedule, gradient
clipping, 200 steps on random images and masks, validation every 50."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.net(x)


class UNet(nn.Module):
    def __init__(self, cin=3, classes=1, width=32):
        super().__init__()
        w = [width, width * 2, width * 4, width * 8]
        self.downs = nn.ModuleList()
        c = cin
        for wi in w:
            self.downs.append(DoubleConv(c, wi))
            c = wi
        self.bottom = DoubleConv(w[-1], w[-1] * 2)
        self.ups = nn.ModuleList()
        self.up_convs = nn.ModuleList()
        c = w[-1] * 2
        for wi in reversed(w):
            self.ups.append(nn.ConvTranspose2d(c, wi, 2, stride=2))
            self.up_convs.append(DoubleConv(wi * 2, wi))
            c = wi
        self.head = nn.Conv2d(w[0], classes, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, conv, skip in zip(self.ups, self.up_convs, reversed(skips)):
            x = up(x)
            x = conv(torch.cat([skip, x], dim=1))
        return self.head(x)


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def batch(n, size, device):
    images = torch.randn(n, 3, size, size, device=device).contiguous(memory_format=torch.channels_last)
    masks = (torch.rand(n, 1, size, size, device=device) > 0.7).float()
    return images, masks


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--size", type=int, default=128)
    args = p.parse_args()
    torch.manual_seed(0)
    device = "cuda"
    model = UNet().to(device, memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    for step in range(1, args.steps + 1):
        model.train()
        images, masks = batch(args.batch_size, args.size, device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images)
        logits = logits.float()
        loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                vi, vm = batch(args.batch_size, args.size, device)
                vl = model(vi).float()
                iou = ((vl > 0) & (vm > 0)).sum() / ((vl > 0) | (vm > 0)).sum().clamp(min=1)
            print(f"step {step} loss {loss.item():.4f} val IoU {iou.item():.3f}", flush=True)
    print("done")


if __name__ == "__main__":
    main()
