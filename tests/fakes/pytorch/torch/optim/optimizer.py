"""torch.optim.optimizer of the fake torch."""
_hooks = []


def register_optimizer_step_post_hook(hook):
    _hooks.append(hook)


class Optimizer:
    def step(self):
        for hook in _hooks:
            hook(self, (), {})
