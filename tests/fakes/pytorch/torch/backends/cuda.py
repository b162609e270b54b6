"""torch.backends.cuda of the fake torch: scaled_dot_product_attention's
backends, as real torch 2.11 switches them (torch._C's flags; cuDNN's
attention on by default, as on the H100)."""
import torch


def cudnn_sdp_enabled():
    return torch._C._get_cudnn_sdp_enabled()


def enable_cudnn_sdp(enabled):
    torch._C._set_sdp_use_cudnn(enabled)
