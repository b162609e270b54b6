"""Correct: an ordinary Hugging Face fine-tuning loop written by hand: a
small BERT (built from its config, no weights) for sequence
classification, AdamW with `transformers`' linear warmup schedule,
gradient accumulation over four micro-batches, gradient clipping, 150
optimizer steps, an evaluation pass every 50 steps."""
import argparse
import time

import torch
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup


def batch(batch_size, seq_len, vocab, device):
    input_ids = torch.randint(0, vocab, (batch_size, seq_len), device=device)
    attention_mask = torch.ones_like(input_ids)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,), device=device)
    attention_mask[torch.arange(seq_len, device=device)[None, :] >= lengths[:, None]] = 0
    labels = torch.randint(0, 2, (batch_size,), device=device)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--accumulate", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda")
    config = BertConfig(vocab_size=8000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024, num_labels=2)
    model = BertForSequenceClassification(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=15, num_training_steps=args.steps)
    start = time.time()
    for step in range(1, args.steps + 1):
        model.train()
        for _ in range(args.accumulate):
            loss = model(**batch(args.batch_size, 128, config.vocab_size, device)).loss / args.accumulate
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if step % 50 == 0:
            model.eval()
            correct = total = 0
            with torch.no_grad():
                for _ in range(4):
                    b = batch(64, 128, config.vocab_size, device)
                    logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
                    correct += (logits.argmax(-1) == b["labels"]).sum().item()
                    total += b["labels"].numel()
            print(f"step {step:4d}  loss {loss.item() * args.accumulate:.4f}  eval acc {correct / total:.3f}  "
                  f"{time.time() - start:.1f}s", flush=True)
    print("done")


if __name__ == "__main__":
    main()
