"""In-place arguments that overlap themselves or each other are an error:
the op must raise, naming itself and the arguments, and leave every byte of
the memory involved as it was.

The check is on byte ranges: views whose ranges intersect are refused even
when their elements interleave without sharing one (a clear error rather
than a silent wrong answer; pass a .clone()).
"""

from __future__ import annotations

import pytest
import torch

import myns

# The error class is the library's choice (RuntimeError or ValueError); the
# message must name the op and the arguments.
ERRORS = (RuntimeError, ValueError)


def refused(fn, buf, *words):
    before = buf.clone()
    with pytest.raises(ERRORS) as info:
        fn()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} not in: {msg}"
    assert torch.equal(buf.view(torch.int32), before.view(torch.int32)), "memory changed by a refused call"


def _fused(x, r, w):
    return lambda: myns.fused_add_rms_norm(x, r, w, 1e-6)


def test_fused_add_rms_norm_residual_one_row_after_x(device):
    buf = torch.randn(5, 16, device=device)
    w = torch.randn(16, device=device)
    refused(_fused(buf[0:4], buf[1:5], w), buf, "myns::fused_add_rms_norm", "`x`", "`residual`")


def test_fused_add_rms_norm_residual_half_a_row_after_x(device):
    buf = torch.randn(4 * 16 + 8, device=device)
    w = torch.randn(16, device=device)
    x, r = buf[0:64].view(4, 16), buf[8:72].view(4, 16)
    refused(_fused(x, r, w), buf, "myns::fused_add_rms_norm", "`x`", "`residual`")


def test_fused_add_rms_norm_x_one_row_after_residual(device):
    buf = torch.randn(5, 16, device=device)
    w = torch.randn(16, device=device)
    refused(_fused(buf[1:5], buf[0:4], w), buf, "myns::fused_add_rms_norm", "`x`", "`residual`")


def test_fused_add_rms_norm_expanded_x(device):
    base = torch.randn(1, 16, device=device)
    r = torch.randn(4, 16, device=device)
    before = r.clone()
    refused(_fused(base.expand(4, 16), r, torch.randn(16, device=device)), base, "myns::fused_add_rms_norm", "`x`")
    assert torch.equal(r, before)


def test_scale__expanded(device):
    base = torch.randn(1, 8, device=device)
    refused(lambda: myns.scale_(base.expand(4, 8), 2.0), base, "myns::scale_", "`x`")


def test_scale__as_strided_overlapping_rows(device):
    buf = torch.randn(4 * 4 + 8, device=device)
    refused(lambda: myns.scale_(buf.as_strided((4, 8), (4, 1)), 2.0), buf, "myns::scale_", "`x`")


def test_scale__as_strided_stride_zero_inner(device):
    buf = torch.randn(8, device=device)
    refused(lambda: myns.scale_(buf.as_strided((4, 2), (2, 0)), 2.0), buf, "myns::scale_", "`x`")


@pytest.mark.parametrize("op", ["silu_and_mul_backward_", "gelu_and_mul_backward_"])
def test_gated_backward_inplace_grad_inside_x(op, device):
    # grad is the first half of x's rows: writing x would change grad while it is read.
    buf = torch.randn(4, 16, device=device)
    refused(lambda: getattr(myns, op)(buf, buf[:, :8]), buf, f"myns::{op}", "`x`", "`grad`")
