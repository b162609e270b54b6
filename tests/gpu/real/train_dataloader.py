"""Correct: an ordinary training script fed by a DataLoader with worker
processes: a small CNN on a synthetic image dataset (decoded and augmented
on the CPU in four workers, pinned memory), fp16 autocast with a
GradScaler, two epochs of 150 steps and an evaluation pass."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Shapes(Dataset):
    """Random 32x32 images whose label is the brightest quadrant."""

    def __init__(self, n, seed):
        self.n, self.seed = n, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        image = torch.rand(3, 32, 32, generator=g)
        label = int(torch.randint(0, 4, (1,), generator=g))
        r, c = divmod(label, 2)
        image[:, r * 16:(r + 1) * 16, c * 16:(c + 1) * 16] += 0.5
        if torch.rand(1, generator=g) < 0.5:
            image = image.flip(-1)
            label = label ^ 1
        return image, label


def model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 4),
    )


def main():
    torch.manual_seed(0)
    train = DataLoader(Shapes(150 * 64, 1), batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    test = DataLoader(Shapes(1024, 2), batch_size=256, num_workers=2)
    net = model().cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    scaler = torch.amp.GradScaler("cuda")
    step = 0
    for epoch in range(2):
        net.train()
        for images, labels in train:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(net(images), labels)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
        net.eval()
        correct = 0
        with torch.no_grad():
            for images, labels in test:
                correct += (net(images.cuda()).argmax(1).cpu() == labels).sum().item()
        print(f"epoch {epoch} accuracy {correct / 1024:.3f}", flush=True)


if __name__ == "__main__":
    main()
