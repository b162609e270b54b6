"""A fake torch for the CSAN stage's tests on machines without a GPU: it
does what real torch 2.11 does with TORCH_CUDA_SANITIZER=1 at import (turns
torch.cuda._sanitizer.cuda_sanitizer on), and misbehaves on demand:
FAKE_TORCH_CSAN=off (a torch that ignores the variable), =missing (a torch
without torch.cuda._sanitizer). For the memory stage it has a fake
caching allocator (torch/cuda/__init__.py)."""
import os

from torch import _C, cuda, optim  # noqa: F401


class OutOfMemoryError(RuntimeError):
    pass


__version__ = "2.11.0+fake"

mode = os.environ.get("FAKE_TORCH_CSAN", "")
if mode != "missing":
    from torch.cuda import _sanitizer  # noqa: F401

    if os.environ.get("TORCH_CUDA_SANITIZER") and mode != "off":
        _sanitizer.cuda_sanitizer.enabled = True
