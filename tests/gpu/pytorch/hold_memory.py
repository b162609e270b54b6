"""Another job on a shared GPU: holds all but HEADROOM_GIB (default 2) of
GPU 0's memory until killed, and says so on stdout once it does."""
import os
import time

import torch

free, _ = torch.cuda.mem_get_info()
keep = free - int(float(os.environ.get("HEADROOM_GIB", "2")) * 2**30)
held = torch.empty(keep, dtype=torch.uint8, device="cuda")
print(f"holding {keep >> 20} MiB", flush=True)
while True:
    time.sleep(1)
