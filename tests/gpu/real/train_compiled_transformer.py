"""Correct: an ordinary training script that compiles its model: a small
transformer encoder (PyTorch's nn.TransformerEncoder) for token
classification under `torch.compile`, bf16 autocast, AdamW, 200 steps, a
log line every 50. Inductor generates its own Triton kernels for the
forward and backward."""
import argparse
import time

import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, dim, layers, heads, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, tags)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = Tagger(vocab=5000, dim=256, layers=4, heads=4, tags=17).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    compiled = torch.compile(model)
    criterion = nn.CrossEntropyLoss()
    start = time.time()
    for step in range(1, args.steps + 1):
        tokens = torch.randint(0, 5000, (args.batch_size, 64), device=device)
        tags = torch.randint(0, 17, (args.batch_size, 64), device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = compiled(tokens)
            loss = criterion(logits.flatten(0, 1), tags.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  {time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
