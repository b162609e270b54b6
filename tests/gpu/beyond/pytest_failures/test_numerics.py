"""Tests that fail for reasons of their own, with no CUDA error: a GPU
result compared with the CPU's at a tolerance half precision cannot meet,
and a fixture that raises before its test runs. One test passes."""
import pytest
import torch


@pytest.fixture
def checkpoint():
    raise FileNotFoundError("weights.pt: run the download step first")


def test_fp16_matmul_matches_cpu():
    torch.manual_seed(0)
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    got = (a.cuda().half() @ b.cuda().half()).float().cpu()
    assert torch.allclose(got, a @ b, atol=1e-4)


def test_loads_checkpoint(checkpoint):
    assert checkpoint is not None


def test_sum_on_gpu():
    assert torch.ones(8, device="cuda").sum().item() == 8
