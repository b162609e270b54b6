"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a small Llama trained from scratch with transformers: a LlamaConfig of
4 layers, SDPA attention, gradient checkpointing, bf16 autocast, fused
AdamW, cosine schedule with warm-up, 200 steps on random tokens with padding
and an attention mask, a log line every 25."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM, get_cosine_schedule_with_warmup

torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=8000, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
    num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512,
    attn_implementation="sdpa",
)
model = LlamaForCausalLM(config).cuda()
model.gradient_checkpointing_enable()
model.config.use_cache = False
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1, fused=True)
scheduler = get_cosine_schedule_with_warmup(optimizer, 20, 200)
model.train()
for step in range(200):
    ids = torch.randint(3, config.vocab_size, (8, 256), device="cuda")
    lengths = torch.randint(128, 257, (8,), device="cuda")
    mask = (torch.arange(256, device="cuda")[None, :] < lengths[:, None]).long()
    labels = ids.masked_fill(mask == 0, -100)
    ids = ids.masked_fill(mask == 0, 0)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 25 == 0:
        print(f"step {step} loss {out.loss.item():.3f}", flush=True)
print("done")
