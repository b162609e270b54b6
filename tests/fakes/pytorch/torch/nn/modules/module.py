"""torch.nn.modules.module of the fake torch: the global forward hooks
(`register_module_forward_pre_hook`, `register_module_forward_hook` with
`always_call`) and a Module whose call runs them around `forward`, the
always_call ones also when `forward` raised, as torch 2.11 does."""
_pre = []
_post = []


def register_module_forward_pre_hook(hook):
    _pre.append(hook)


def register_module_forward_hook(hook, *, always_call=False):
    _post.append((hook, always_call))


class Module:
    def __call__(self, *args):
        for hook in _pre:
            hook(self, args)
        try:
            output = self.forward(*args)
        except Exception:
            for hook, always in _post:
                if always:
                    hook(self, args, None)
            raise
        for hook, _ in _post:
            hook(self, args, output)
        return output
