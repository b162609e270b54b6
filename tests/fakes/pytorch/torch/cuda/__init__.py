"""torch.cuda of the fake torch: lazy initialisation, a caching allocator
that keeps its blocks with the Python stack that allocated them (as real
torch does with _record_memory_history(stacks="python")), memory figures,
snapshots in real torch's layout, and the OOM observer. A program
allocates with fake_alloc(bytes) and frees with fake_free(block); going
over FAKE_TORCH_CAPACITY bytes (default 1 GiB) calls the observers, then
raises torch.OutOfMemoryError, as real torch does."""
import os
import traceback

from . import memory  # noqa: F401

_initialized = False
_queued = []
_observers = []
_blocks = {}
_next = [0x7F0000000000]
_peak = [0]
CAPACITY = int(os.environ.get("FAKE_TORCH_CAPACITY", str(1 << 30)))
TOTAL = 80 << 30


def _lazy_call(fn):
    if _initialized:
        fn()
    else:
        _queued.append(fn)


def init():
    global _initialized
    if not _initialized:
        _initialized = True
        for fn in _queued:
            fn()


def synchronize():
    pass


def is_initialized():
    return _initialized


def memory_allocated():
    return sum(size for size, _ in _blocks.values())


def memory_reserved():
    return memory_allocated()


def max_memory_allocated():
    return _peak[0]


def max_memory_reserved():
    return _peak[0]


def mem_get_info():
    return (TOTAL - memory_reserved(), TOTAL)


def set_per_process_memory_fraction(fraction, device=None):
    global CAPACITY
    CAPACITY = int(fraction * TOTAL)


def _stack():
    frames = traceback.extract_stack()[:-2]
    return [{"filename": f.filename, "line": f.lineno, "name": f.name} for f in reversed(frames)]


def fake_alloc(size):
    init()
    if memory_allocated() + size > CAPACITY:
        memory._trace.append({"action": "oom", "addr": None, "size": size, "frames": _stack()})
        for fn in _observers:
            fn(0, size, memory_allocated(), TOTAL - memory_allocated())
        import torch

        raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size} bytes.")
    addr = _next[0]
    _next[0] += size
    frames = _stack()
    _blocks[addr] = (size, frames)
    memory._trace.append({"action": "alloc", "addr": addr, "size": size, "frames": frames})
    _peak[0] = max(_peak[0], memory_allocated())
    return addr


def fake_free(addr):
    size, _ = _blocks.pop(addr)
    memory._trace.append({"action": "free_completed", "addr": addr, "size": size, "frames": []})


# CUDA graphs: a capture (torch.cuda.graph) and replays, which run nothing.
_capturing = [False]


def is_current_stream_capturing():
    if not _initialized:
        raise RuntimeError("fake torch: asked whether a stream captures before CUDA was initialised")
    return _capturing[0]


class CUDAGraph:
    def capture_begin(self, *args, **kwargs):
        init()
        _capturing[0] = True

    def capture_end(self):
        _capturing[0] = False

    def replay(self):
        pass


class graph:
    """As real torch's: the capture is the graph's capture_begin/_end."""

    def __init__(self, cuda_graph):
        self.cuda_graph = cuda_graph

    def __enter__(self):
        self.cuda_graph.capture_begin()
        return self

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False
