"""torch.cuda of the fake torch."""
