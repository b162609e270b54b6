"""Correct: Hugging Face's Trainer on a small GPT-2 built from a config
(random weights, nothing downloaded), eight steps over random token ids
with bf16 and gradient accumulation, as a user's fine-tuning script runs
it: Trainer owns the loop, the optimizer (AdamW), the scheduler, the
DataLoader and accelerate's mixed precision."""
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class RandomTokens(Dataset):
    def __init__(self, n, length):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, 256, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            max_steps=8,
            per_device_train_batch_size=4,
            gradient_accumulation_steps=2,
            bf16=True,
            logging_steps=4,
            save_strategy="no",
            report_to=[],
            dataloader_num_workers=0,
        )
        trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(64, 32))
        result = trainer.train()
    print(f"steps {result.global_step} loss {result.training_loss:.4f}")


if __name__ == "__main__":
    main()
