"""Correct: an ordinary vision-transformer training script with mixed
precision: timm's VisionTransformer (ViT-tiny's width, 64x64 images in
8x8 patches) trained for 200 AdamW steps under bf16 autocast with a cosine
schedule and label smoothing, a log line every 50 steps."""
import argparse

import timm
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=8, num_classes=100, embed_dim=192, depth=12, num_heads=3
    ).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    criterion = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    model.train()
    for step in range(1, args.steps + 1):
        images = torch.randn(args.batch_size, 3, 64, 64, device="cuda")
        labels = torch.randint(0, 100, (args.batch_size,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 50 == 0:
            print(f"step {step}  loss {loss.item():.4f}", flush=True)
    print("done")


if __name__ == "__main__":
    main()
