"""Correct: a generation script, as users' inference scripts run: a small
GPT-2 built from a config (random weights, nothing downloaded) generates
200 new tokens for each of 8 prompts with Hugging Face's `generate`. Each
new token is one call of the model, so `--steps N` ends it after its
first N model calls."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=4, n_head=4, n_embd=256, vocab_size=1000, n_positions=512)
    model = GPT2LMHeadModel(config).cuda().eval()
    total = 0
    for prompt in range(8):
        ids = torch.randint(0, 1000, (1, 16), device="cuda")
        out = model.generate(ids, max_new_tokens=200, do_sample=False, pad_token_id=0)
        total += out.shape[1] - ids.shape[1]
    print(f"generated {total} tokens")


if __name__ == "__main__":
    main()
