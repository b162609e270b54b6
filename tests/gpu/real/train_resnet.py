"""Correct: an ordinary training script, as its author writes it:
torchvision's ResNet-18 trained for 300 SGD steps with momentum on random
64x64 images (batch 32), a log line every 50 steps. Everything on the GPU
is cuDNN, cuBLAS and ATen."""
import argparse
import time

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torchvision.models.resnet18(num_classes=10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    criterion = torch.nn.CrossEntropyLoss()
    model.train()
    start = time.time()
    for step in range(1, args.steps + 1):
        images = torch.randn(args.batch_size, 3, 64, 64, device=device)
        labels = torch.randint(0, 10, (args.batch_size,), device=device)
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  {time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
