"""torch.cuda._sanitizer of the fake torch: the object real torch keeps,
and its dispatch mode, which books every operator it is handed as real
CSAN does (torch.fake_op hands them over). Real CSAN booked the operators
called while a CUDA graph captured as running, and reported the graph's
next static-input copy as a race with them (H100, torch 2.11,
tests/gpu/real/cudagraph_step.py): `booked_in_capture` counts them so
a test program can do the same, and the files of the booked call stacks.
Each operator's tensor arguments are booked by their data pointers, as
torch 2.11's ArgumentHandler does (`booked_ptrs`): a sparse tensor raises
there, as on the H200 (tests/gpu/real/train_recsys.py)."""


class ArgumentHandler:
    """Books each tensor argument by its data pointer, as torch 2.11's does
    (so a sparse tensor, which has none, raises here as it does there)."""

    def __init__(self):
        self.dataptrs_read = set()

    def _handle_argument(self, value, is_write, metadata_only, name=None, is_output=False):
        import torch

        if isinstance(value, torch.Tensor) and value.is_cuda:
            data_ptr = value.data_ptr() if value.data_ptr() else id(value)
            self.dataptrs_read.add(data_ptr)


class CUDASanitizerDispatchMode:
    booked_in_capture = 0
    # The files of each booked operator's call stack, as real CSAN keeps
    # them for its race reports (whose innermost frame outside torch is the
    # line cudawatch reports).
    booked_files = []
    # The data pointers of every operator's arguments, as booked.
    booked_ptrs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        import functools
        import traceback

        from torch import cuda

        if cuda.is_initialized() and cuda.is_current_stream_capturing():
            CUDASanitizerDispatchMode.booked_in_capture += 1
        handler = ArgumentHandler()
        for value in args:
            functools.partial(handler._handle_argument, is_write=False, metadata_only=False)(value)
        CUDASanitizerDispatchMode.booked_ptrs.extend(sorted(handler.dataptrs_read))
        stack = traceback.extract_stack()
        CUDASanitizerDispatchMode.booked_files.extend(f.filename for f in stack)
        return func(*args, **(kwargs or {}))


class CUDASanitizer:
    def __init__(self):
        self.enabled = False
        self.dispatch = CUDASanitizerDispatchMode()

    def disable(self):
        self.enabled = False


cuda_sanitizer = CUDASanitizer()
