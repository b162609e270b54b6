"""Correct: a model's GPU tests as a CI job runs them with pytest. Every
test passes; everything on the GPU is cuBLAS, cuDNN and ATen."""
import pytest
import torch

from prefetch import normalised_on_side_stream


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def test_gpu_forward_matches_cpu():
    model = mlp()
    x = torch.randn(32, 64)
    expected = model(x)
    got = model.cuda()(x.cuda()).cpu()
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_training_steps_reduce_the_loss(dtype):
    model = mlp().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(256, 64, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    losses = []
    for _ in range(5):
        with torch.autocast("cuda", dtype=dtype):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_conv_block_shapes():
    block = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).cuda()
    out = block(torch.randn(4, 3, 16, 16, device="cuda"))
    assert out.shape == (4, 8, 16, 16)


def test_side_stream_normalisation():
    raw = torch.empty(256, 512, device="cuda")
    raw.normal_(mean=3.0, std=2.0)
    batch = normalised_on_side_stream(raw)
    assert abs(batch.mean().item()) < 1e-3
    assert abs(batch.std().item() - 1.0) < 1e-3


def test_bad_shapes_are_refused():
    layer = torch.nn.Linear(4, 2).cuda()
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        layer(torch.randn(3, 5, device="cuda"))
