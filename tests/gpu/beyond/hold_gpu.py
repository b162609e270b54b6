"""Another user's job: holds all but HOLD_FREE_MIB (default 1024) of the
GPU's memory until killed."""
import os
import signal
import time

import torch

free, _ = torch.cuda.mem_get_info()
keep = int(os.environ.get("HOLD_FREE_MIB", "1024")) << 20
held = torch.empty(free - keep, dtype=torch.uint8, device="cuda")
print(f"holding {held.numel() >> 20} MiB", flush=True)
signal.signal(signal.SIGTERM, lambda *_: exit(0))
while True:
    time.sleep(1)
