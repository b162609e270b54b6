"""torch.backends.cudnn of the fake torch, built as real torch 2.11 builds
it: the module replaced in sys.modules by an instance of a module subclass
whose `benchmark` is a descriptor holding torch._C's getter and setter, and
`flags()`, which looks the setter up on torch._C each time."""
import sys
import types
from contextlib import contextmanager

import torch


class ContextProp:
    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter()

    def __set__(self, obj, val):
        self.setter(val)


@contextmanager
def flags(benchmark=False):
    before = torch._C._get_cudnn_benchmark()
    torch._C._set_cudnn_benchmark(benchmark)
    try:
        yield
    finally:
        torch._C._set_cudnn_benchmark(before)


class CudnnModule(types.ModuleType):
    def __init__(self, m, name):
        super().__init__(name)
        self.m = m

    def __getattr__(self, attr):
        return getattr(self.m, attr)

    benchmark = ContextProp(torch._C._get_cudnn_benchmark, torch._C._set_cudnn_benchmark)


sys.modules[__name__] = CudnnModule(sys.modules[__name__], __name__)
