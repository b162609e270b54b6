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

Which blocks read (is the staging read one block a launch, and which?):

  rows10_loop  rows10 ten times on the main thread, a line of its own
  tabular      a dataset standardised on the GPU: X.mean(0), X.std(0)
               over 100,000 rows of 13 features
  rows_half    torch.empty(20000, 10), its first half filled, sum(0):
               the user's bug in a reduction of many blocks
  rows_tail    the same with all but its last 100 rows filled
  rows_none    the same with nothing filled
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
elif case == "rows10_loop":
    x = torch.randn(20000, 10, device="cuda")
    total = 0.0
    for _ in range(10):
        total += x.sum(0).sum().item()
    print(total)
elif case == "tabular":
    X = torch.randn(100000, 13, device="cuda") * 3 + 1
    X = (X - X.mean(0)) / X.std(0)
    print(X.abs().max().item())
elif case in ("rows_half", "rows_tail", "rows_none"):
    buf = torch.empty(20000, 10, device="cuda")
    filled = {"rows_half": 10000, "rows_tail": 19900, "rows_none": 0}[case]
    buf[:filled] = 1.0
    print(buf.sum(0).sum().item())
else:
    raise SystemExit(f"unknown case {case}")
