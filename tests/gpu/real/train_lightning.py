"""Correct: an ordinary Lightning script: a LightningModule (a small CNN
with a OneCycle schedule) fitted by Lightning's Trainer for three epochs
of 100 steps with a validation loop, as the Lightning docs write one."""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self, lr=3e-3, steps=300):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
            nn.Flatten(), nn.Linear(32 * 16, 10),
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr, total_steps=self.hparams.steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    x[torch.arange(n), 0, y, y] += 3.0
    return TensorDataset(x, y)


def main():
    L.seed_everything(0)
    train = DataLoader(data(100 * 32, 1), batch_size=32, shuffle=True)
    val = DataLoader(data(512, 2), batch_size=128)
    trainer = L.Trainer(
        accelerator="gpu", devices=1, max_epochs=3, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, log_every_n_steps=50,
    )
    trainer.fit(Classifier(steps=300), train, val)
    print("fit done", trainer.callback_metrics.get("val_acc"))


if __name__ == "__main__":
    main()
