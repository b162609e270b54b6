"""Correct: an ordinary mixed-precision CNN training script with the usual
speed settings: torchvision's EfficientNet-B0 in channels-last memory
format, `cudnn.benchmark` on (cuDNN tries its algorithms on the first
step), fp16 autocast with a GradScaler, two micro-batches accumulated per
optimizer step, a OneCycle schedule, 300 optimizer steps, a log line every
50."""
import argparse
import time

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--accumulate", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda")
    model = torchvision.models.efficientnet_b0(num_classes=10).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=args.steps)
    scaler = torch.amp.GradScaler("cuda")
    criterion = torch.nn.CrossEntropyLoss()
    model.train()
    start = time.time()
    step = 0
    micro = 0
    while step < args.steps:
        images = torch.randn(args.batch_size, 3, 96, 96, device=device).to(memory_format=torch.channels_last)
        labels = torch.randint(0, 10, (args.batch_size,), device=device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(images), labels) / args.accumulate
        scaler.scale(loss).backward()
        micro += 1
        if micro % args.accumulate:
            continue
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        step += 1
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item() * args.accumulate:.4f}  scale {scaler.get_scale():.0f}  "
                  f"{time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
