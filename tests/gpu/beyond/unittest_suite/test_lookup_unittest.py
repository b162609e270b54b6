"""The pytest_embedding bug as a unittest suite (`python3 -m unittest`):
test_1_lookup trips ATen's device-side assert, and test_2_sum_after fails
with the same sticky error at its own line."""
import unittest

import torch

WORDS = ["the", "cat", "sat", "on", "mat"]
VOCAB = {w: i for i, w in enumerate(WORDS)}


def token_ids(words, device):
    return torch.tensor([VOCAB[w] + 1 for w in words], device=device)  # BUG: +1


class Lookup(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(len(VOCAB), 8).cuda()

    def test_1_lookup(self):
        out = self.emb(token_ids(["the", "mat"], "cuda"))
        self.assertEqual(out.shape, (2, 8))

    def test_2_sum_after(self):
        self.assertEqual(torch.ones(4, device="cuda").sum().item(), 4)
