"""Correct (an outside check, written 2026-11-29 and run before any change for
it): a speech-recognition training loop: log-mel-like features through a 2-D
convolutional front end and a bidirectional GRU, CTC loss over variable-
length inputs and targets (pack_padded_sequence), AdamW with OneCycle,
gradient clipping, 200 steps, greedy decoding at the end."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
dev = "cuda"
VOCAB, MELS, B = 30, 80, 16


class ASR(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=(2, 2), padding=1), nn.BatchNorm2d(32), nn.GELU(),
            nn.Conv2d(32, 32, 3, stride=(2, 1), padding=1), nn.BatchNorm2d(32), nn.GELU(),
        )
        self.rnn = nn.GRU(32 * (MELS // 4), 256, num_layers=2, bidirectional=True, batch_first=True, dropout=0.1)
        self.head = nn.Linear(512, VOCAB)

    def forward(self, feats, lengths):
        x = self.conv(feats.unsqueeze(1))              # B, C, MELS/4, T/2
        x = x.flatten(1, 2).transpose(1, 2)            # B, T/2, C*MELS/4
        lengths = (lengths + 1) // 2
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return self.head(out).log_softmax(-1), lengths


model = ASR().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=200)
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
for step in range(1, 201):
    in_lens = torch.randint(200, 401, (B,), device=dev)
    feats = torch.randn(B, MELS, int(in_lens.max()), device=dev)
    tgt_lens = torch.randint(10, 40, (B,), device=dev)
    targets = torch.randint(1, VOCAB, (int(tgt_lens.sum()),), device=dev)
    logp, out_lens = model(feats, in_lens)
    loss = ctc(logp.transpose(0, 1), targets, out_lens, tgt_lens)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    sched.step()
    if step % 50 == 0:
        print(f"step {step} ctc {loss.item():.3f}", flush=True)
model.eval()
with torch.no_grad():
    best = logp.argmax(-1)[0]
    decoded = torch.unique_consecutive(best)
    print("decoded", decoded[decoded != 0][:20].tolist())
