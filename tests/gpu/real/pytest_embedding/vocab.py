"""The user's tokenizer helper, where the bug lives."""
import torch


def token_ids(words, vocab, device):
    """Ids of words already in the vocabulary."""
    return torch.tensor([vocab[w] + 1 for w in words], device=device)  # BUG: +1 left from a removed padding id
