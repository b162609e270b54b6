"""torch.utils.deterministic as in torch 2.11: whether deterministic mode
fills each new tensor (its default, True)."""
fill_uninitialized_memory = True
