"""torch.optim of the fake torch: an optimizer whose step() calls the
global post-step hooks, as real torch's do."""
from .optimizer import Optimizer  # noqa: F401
