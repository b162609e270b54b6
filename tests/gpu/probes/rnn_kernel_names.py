"""The CUDA kernels cuDNN's RNNs launch (tests/gpu/real/train_ctc.py's
bidirectional GRU showed `RNN_bidirectional_accum_bp1_1`, which no
library-name fragment matched): one forward and backward of each of a
uni- and bidirectional GRU and LSTM under PyTorch's profiler, every kernel
name it saw, one per line."""
import torch
from torch.profiler import ProfilerActivity, profile

names = set()
for cell in (torch.nn.GRU, torch.nn.LSTM):
    for bidirectional in (False, True):
        rnn = cell(64, 128, num_layers=2, bidirectional=bidirectional, batch_first=True).cuda()
        x = torch.randn(8, 50, 64, device="cuda", requires_grad=True)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out, _ = rnn(x)
            out.sum().backward()
            torch.cuda.synchronize()
        names.update(e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
for name in sorted(names):
    print(name)
