"""torch.backends of the fake torch."""
