"""Which of ATen's sum reductions initcheck flags in a correct program
(tests/gpu/real/train_gnn.py: 120 records per step in one block of
`reduce_kernel<256, 2, ..., 4, 4>`, no host stack, no Python line), run
one case at a time under initcheck:

  rows10       torch.randn(20000, 10).sum(0): many rows, 10 outputs
  rows16       the same with 16 outputs (a multiple of the 4-wide vector)
  bias10       a Linear(64, 10)'s backward over 20000 rows (its bias
               gradient is that sum, on autograd's thread)
  empty_half   a torch.empty buffer half filled, then summed (the user's
               bug of tests/gpu/real/empty_then_reduce.py)
"""
import sys

import torch

case = sys.argv[1]
torch.manual_seed(0)
if case == "rows10":
    print(torch.randn(20000, 10, device="cuda").sum(0).sum().item())
elif case == "rows16":
    print(torch.randn(20000, 16, device="cuda").sum(0).sum().item())
elif case == "bias10":
    lin = torch.nn.Linear(64, 10).cuda()
    lin(torch.randn(20000, 64, device="cuda")).square().mean().backward()
    print(lin.bias.grad.sum().item())
elif case == "empty_half":
    buf = torch.empty(1024, device="cuda")
    buf[:512] = 1.0
    print(buf.sum().item())
else:
    raise SystemExit(f"unknown case {case}")
