"""Correct: Lightning's Trainer.fit for two steps of a small model."""
import lightning as L
import torch


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 32), torch.randint(0, 2, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=32)
    trainer = L.Trainer(
        accelerator="gpu", devices=1, max_steps=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Model(), loader)
    print("fit done")


if __name__ == "__main__":
    main()
