"""Bug in the user's part of an ordinary training script: the ResNet-18
script of train_resnet.py, with its labels drawn one past the classes
(1..10 for a 10-class head), so cross-entropy's device-side index assert
trips in the first step."""
import argparse

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    for step in range(1, args.steps + 1):
        images = torch.randn(args.batch_size, 3, 64, 64, device="cuda")
        labels = torch.randint(1, 11, (args.batch_size,), device="cuda")  # BUG: classes are 0..9
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}", flush=True)
    print("done")


if __name__ == "__main__":
    main()
