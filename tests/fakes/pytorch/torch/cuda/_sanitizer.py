"""torch.cuda._sanitizer of the fake torch: the object real torch keeps,
and its dispatch mode, which books every operator it is handed as real
CSAN does (torch.fake_op hands them over). Real CSAN booked the operators
called while a CUDA graph captured as running, and reported the graph's
next static-input copy as a race with them (H100, torch 2.11,
tests/gpu/real/cudagraph_step.py): `booked_in_capture` counts them so
a test program can do the same, and the files of the booked call stacks."""


class CUDASanitizerDispatchMode:
    booked_in_capture = 0
    # The files of each booked operator's call stack, as real CSAN keeps
    # them for its race reports (whose innermost frame outside torch is the
    # line cudawatch reports).
    booked_files = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        import traceback

        from torch import cuda

        if cuda.is_initialized() and cuda.is_current_stream_capturing():
            CUDASanitizerDispatchMode.booked_in_capture += 1
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
