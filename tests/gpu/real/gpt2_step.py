"""Correct: one training step of a small GPT-2 built from a config with
random weights (Hugging Face transformers; nothing is downloaded)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 256, (2, 32), device="cuda")
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    opt.step()
    torch.cuda.synchronize()
    print(f"loss {out.loss.item():.4f}")


if __name__ == "__main__":
    main()
