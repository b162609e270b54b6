"""Bug in the user's part, as a CI job's pytest run meets it: the helper
hands the embedding an id one past the vocabulary, so ATen's gather kernel
trips its device-side assert in test_lookup, and every CUDA call after it
fails too (test_sum_after)."""
import pytest
import torch

from vocab import token_ids

WORDS = ["the", "cat", "sat", "on", "mat"]
VOCAB = {w: i for i, w in enumerate(WORDS)}


@pytest.fixture(scope="module")
def emb():
    torch.manual_seed(0)
    return torch.nn.Embedding(len(VOCAB), 8).cuda()


def test_vocab_is_dense():
    assert sorted(VOCAB.values()) == list(range(len(WORDS)))


def test_lookup(emb):
    ids = token_ids(["the", "mat"], VOCAB, "cuda")
    out = emb(ids)
    assert out.shape == (2, 8)


def test_sum_after(emb):
    x = torch.ones(4, device="cuda")
    assert x.sum().item() == 4
