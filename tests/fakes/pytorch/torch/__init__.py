"""A fake torch for the CSAN stage's tests on machines without a GPU: it
does what real torch 2.11 does with TORCH_CUDA_SANITIZER=1 at import (turns
torch.cuda._sanitizer.cuda_sanitizer on), and misbehaves on demand:
FAKE_TORCH_CSAN=off (a torch that ignores the variable), =missing (a torch
without torch.cuda._sanitizer). For the memory stage it has a fake
caching allocator (torch/cuda/__init__.py)."""
import os

from torch import _C, cuda, nn, optim  # noqa: F401


class OutOfMemoryError(RuntimeError):
    pass


__version__ = "2.11.0+fake"


strided, sparse_coo = "strided", "sparse_coo"


class Tensor:
    """A CUDA tensor, dense (its data pointer `ptr`) or sparse COO: then,
    as torch's, it has no storage (data_ptr() raises) and its indices and
    values are dense tensors of their own."""

    is_cuda = True

    def __init__(self, ptr=0, layout=strided, indices=None, values=None):
        self.ptr, self.layout = ptr, layout
        self.indices, self.values_ = indices, values

    def data_ptr(self):
        if self.layout != strided:
            raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
        return self.ptr

    def _indices(self):
        return self.indices

    def _values(self):
        return self.values_


def fake_op(name, *args):
    """An operator on `args`: handed to CSAN's dispatch mode when CSAN is
    on, looked up on its class as PyTorch's dispatcher does."""
    sanitizer = getattr(getattr(cuda, "_sanitizer", None), "cuda_sanitizer", None)
    if sanitizer is None or not sanitizer.enabled:
        return name
    mode = sanitizer.dispatch
    return type(mode).__torch_dispatch__(mode, lambda *a, **k: name, (), args, None)

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """As torch's: deterministic mode on or off, raising or warning."""
    _deterministic.update(mode=bool(mode), warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def compile(model=None, **kwargs):
    """torch.compile as torch 2.11 behaves under CSAN: Dynamo skips every
    frame while a dispatch mode is on, so the function runs eagerly."""
    if model is None:
        return lambda fn: fn
    return model


mode = os.environ.get("FAKE_TORCH_CSAN", "")
if mode != "missing":
    from torch.cuda import _sanitizer  # noqa: F401

    if os.environ.get("TORCH_CUDA_SANITIZER") and mode != "off":
        _sanitizer.cuda_sanitizer.enabled = True
