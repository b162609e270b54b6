"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a timm training loop as its train.py sets one up: ConvNeXt-atto from
timm.create_model, Mixup/CutMix with soft-target cross-entropy, fp16
autocast with a GradScaler, timm's AdamW and cosine scheduler stepped per
update, a model EMA, 200 steps, a log line every 50."""
import torch
import timm
from timm.data import Mixup
from timm.loss import SoftTargetCrossEntropy
from timm.optim import create_optimizer_v2
from timm.scheduler import CosineLRScheduler
from timm.utils import ModelEmaV2

torch.manual_seed(0)
model = timm.create_model("convnext_atto", num_classes=100, drop_path_rate=0.1).cuda()
optimizer = create_optimizer_v2(model, opt="adamw", lr=2e-3, weight_decay=0.05)
scheduler = CosineLRScheduler(optimizer, t_initial=200, warmup_t=10, warmup_lr_init=1e-5, t_in_epochs=False)
mixup = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1, num_classes=100)
criterion = SoftTargetCrossEntropy()
scaler = torch.amp.GradScaler("cuda")
ema = ModelEmaV2(model, decay=0.999)
model.train()
for step in range(200):
    images = torch.randn(64, 3, 96, 96, device="cuda")
    targets = torch.randint(0, 100, (64,), device="cuda")
    images, targets = mixup(images, targets)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(images), targets)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    scaler.step(optimizer)
    scaler.update()
    ema.update(model)
    scheduler.step_update(num_updates=step + 1)
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.4f} lr {optimizer.param_groups[0]['lr']:.2e}", flush=True)
print("done")
