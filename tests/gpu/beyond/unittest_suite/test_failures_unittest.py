"""Tests that fail with no CUDA error, as a unittest suite: a half-precision
GPU product compared with the CPU's at a tolerance it cannot meet, and a
setUp that raises. One test passes."""
import unittest

import torch


class Numerics(unittest.TestCase):
    def test_fp16_matmul_matches_cpu(self):
        torch.manual_seed(0)
        a, b = torch.randn(256, 256), torch.randn(256, 256)
        got = (a.cuda().half() @ b.cuda().half()).float().cpu()
        self.assertTrue(torch.allclose(got, a @ b, atol=1e-4), "fp16 product differs")

    def test_sum_on_gpu(self):
        self.assertEqual(torch.ones(8, device="cuda").sum().item(), 8)


class Checkpoint(unittest.TestCase):
    def setUp(self):
        raise FileNotFoundError("weights.pt: run the download step first")

    def test_loads(self):
        pass
