"""Correct: an evaluation script that runs for a while, as users' scripts
do: a torchvision ResNet-18 (random weights) in eval mode under
torch.inference_mode, over 600 batches of 32 images, top-1 counted. No
optimizer: `cudawatch run --steps N` ends it after its first N model
calls."""
import torch
import torchvision


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda().eval()
    correct = 0
    with torch.inference_mode():
        for batch in range(600):
            x = torch.randn(32, 3, 224, 224, device="cuda")
            y = torch.randint(0, 10, (32,), device="cuda")
            correct += (model(x).argmax(dim=1) == y).sum().item()
    print(f"evaluated 600 batches, top-1 {correct / (600 * 32):.3f}")


if __name__ == "__main__":
    main()
