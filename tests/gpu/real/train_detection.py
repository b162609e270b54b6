"""Correct: an ordinary detection training script, as its author writes it:
torchvision's Faster R-CNN (MobileNetV3 backbone at 320 px, no pretrained
weights) trained for 100 SGD steps on random images with one to three
boxes each, a log line every 20 steps. Besides cuDNN, cuBLAS and ATen,
torchvision's own CUDA kernels run (RoIAlign, batched NMS)."""
import argparse
import time

import torch
import torchvision


def random_batch(batch_size, device, num_classes):
    images, targets = [], []
    for _ in range(batch_size):
        images.append(torch.rand(3, 320, 320, device=device))
        n = int(torch.randint(1, 4, ()).item())
        xy = torch.rand(n, 2, device=device) * 240
        wh = torch.rand(n, 2, device=device) * 60 + 16
        boxes = torch.cat([xy, xy + wh], dim=1)
        labels = torch.randint(1, num_classes, (n,), device=device)
        targets.append({"boxes": boxes, "labels": labels})
    return images, targets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--num-classes", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=args.num_classes
    ).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
    model.train()
    start = time.time()
    for step in range(1, args.steps + 1):
        images, targets = random_batch(args.batch_size, device, args.num_classes)
        losses = model(images, targets)
        loss = sum(losses.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            parts = "  ".join(f"{k} {v.item():.3f}" for k, v in losses.items())
            print(f"step {step:3d}  loss {loss.item():.3f}  {parts}  {time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
