"""torch.nn of the fake torch: a Module whose calls run the global
forward hooks as real torch's `_call_impl` does."""
from .modules.module import Module  # noqa: F401
