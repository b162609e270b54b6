"""torch._C of the fake torch: the OOM observer's hook."""


def _cuda_attach_out_of_memory_observer(fn):
    from torch import cuda

    cuda._observers.append(fn)


# cuDNN's benchmark flag, a global of ATen's context in real torch.
_cudnn_benchmark = [False]


def _set_cudnn_benchmark(value):
    _cudnn_benchmark[0] = bool(value)


def _get_cudnn_benchmark():
    return _cudnn_benchmark[0]
