"""torch._C of the fake torch: the OOM observer's hook."""


def _cuda_attach_out_of_memory_observer(fn):
    from torch import cuda

    cuda._observers.append(fn)
