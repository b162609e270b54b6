"""Correct: an ordinary language-model training script: a small GPT-2
(transformers' GPT2LMHeadModel from a config, random weights) trained for
200 AdamW steps on random token batches, with a linear warm-up schedule,
gradient clipping and a log line every 25 steps."""
import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    args = parser.parse_args()

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=8192, n_positions=256, n_embd=256, n_layer=4, n_head=4)
    model = GPT2LMHeadModel(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=20, num_training_steps=args.steps)
    model.train()
    for step in range(1, args.steps + 1):
        ids = torch.randint(0, config.vocab_size, (args.batch_size, args.seq_len), device="cuda")
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 25 == 0:
            print(f"step {step}  loss {out.loss.item():.3f}  lr {scheduler.get_last_lr()[0]:.2e}", flush=True)
    print("done")


if __name__ == "__main__":
    main()
