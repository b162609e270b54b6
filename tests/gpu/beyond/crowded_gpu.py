"""A bf16 matmul step on a GPU whose memory is almost all taken.

After a warm-up (cuBLAS's workspace, the tensors), everything free but
MARGIN_MIB is taken, by this process (HOLDER=self) or by another process
(HOLDER=other: a child that holds it until this one ends), then the step
runs 20 times. Plainly the step fits in the margin; under a sanitizer the
tool's own per-launch memory may not (issue 21, class 5: "Internal
Sanitizer Error ... Unable to allocate enough memory").
"""
import os
import subprocess
import sys
import time

import torch

margin = int(os.environ.get("MARGIN_MIB", "96")) << 20
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
c = a @ b
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
take = max(0, free - margin)
holder = None
if os.environ.get("HOLDER", "self") == "other":
    # The other process measures what is free once its own CUDA context
    # exists (half a GiB), and takes all of it but the margin.
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, torch\n"
         "torch.cuda.init(); torch.empty(1, device='cuda')\n"
         "free, _ = torch.cuda.mem_get_info()\n"
         f"x = torch.empty(free - {margin}, dtype=torch.uint8, device='cuda')\n"
         "torch.cuda.synchronize(); print('held', x.numel() >> 20, flush=True)\n"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    said = holder.stdout.readline().split()
    if not said or said[0] != "held":
        sys.exit("the other process could not take the memory")
    take = int(said[1]) << 20
else:
    hold = torch.empty(take, dtype=torch.uint8, device="cuda")
free_now, _ = torch.cuda.mem_get_info()
print(f"free {free >> 20} MiB of {total >> 20}; {take >> 20} MiB now held; "
      f"{free_now >> 20} MiB left", flush=True)
for _ in range(20):
    c = a @ b
torch.cuda.synchronize()
print("step done", float(c[0, 0]))
if holder is not None:
    holder.stdin.close()
    holder.wait()
