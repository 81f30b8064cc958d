"""Property tests (hypothesis): random shapes, strides and dtypes for every
op, against a float64 reference, on every available device."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import myns
from conftest import DEVICES
from op_cases import TOL, call, matches, reference

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tensors(draw, shape, dtype, device, lo=-3.0, hi=3.0):
    """A tensor of `shape` with random values and a random layout: contiguous,
    transposed, sliced with a step, or with a storage offset."""
    layout = draw(st.sampled_from(["contiguous", "transposed", "stepped", "offset"]))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    make = lambda s: (torch.rand(s, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype).to(device)
    if layout == "transposed" and len(shape) >= 2:
        return make(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if layout == "stepped" and len(shape) >= 1:
        return make(shape[:-1] + (shape[-1] * 2,))[..., ::2]
    if layout == "offset":
        return make((1,) + tuple(shape))[0] if not shape else make((2,) + tuple(shape))[1]
    return make(shape)


dims = st.integers(1, 40)
dtype_st = st.sampled_from(DTYPES)
device_st = st.sampled_from(DEVICES)


def check(name, args, dtype):
    expected = reference(name, args)
    out = call(name, args)
    assert matches(out, expected, dtype), f"{name} wrong for shapes {[tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]}"


@SETTINGS
@given(st.data(), st.lists(dims, min_size=0, max_size=3), dtype_st, device_st)
def test_add(data, shape, dtype, device):
    a = data.draw(tensors(tuple(shape), dtype, device))
    b = data.draw(tensors(tuple(shape), dtype, device))
    check("add", [a, b], dtype)


@SETTINGS
@given(st.data(), dims, dims, dims, dtype_st, device_st)
def test_matmul(data, m, k, n, dtype, device):
    a = data.draw(tensors((m, k), dtype, device))
    b = data.draw(tensors((k, n), dtype, device))
    expected = reference("matmul", [a, b])
    out = call("matmul", [a, b])
    # Tolerance grows with the reduction length for half types.
    assert matches(out, expected, dtype) or (
        dtype in (torch.float16, torch.bfloat16) and (out[0].double() - expected[0]).abs().max() <= TOL[dtype] * k
    )


@pytest.mark.skipif("bmm" not in myns.op_names(), reason="no bmm op")
@SETTINGS
@given(st.data(), st.integers(1, 4), dims, dims, dims, dtype_st, device_st)
def test_bmm(data, bsz, m, k, n, dtype, device):
    a = data.draw(tensors((bsz, m, k), dtype, device))
    b = data.draw(tensors((bsz, k, n), dtype, device))
    expected = reference("bmm", [a, b])
    out = call("bmm", [a, b])
    assert matches(out, expected, dtype) or (
        dtype in (torch.float16, torch.bfloat16) and (out[0].double() - expected[0]).abs().max() <= TOL[dtype] * k
    )


@SETTINGS
@given(st.data(), st.lists(dims, min_size=0, max_size=2), dims, dtype_st, device_st)
def test_rms_norm_and_backward(data, lead, h, dtype, device):
    shape = tuple(lead) + (h,)
    x = data.draw(tensors(shape, dtype, device))
    w = data.draw(tensors((h,), dtype, device))
    eps = data.draw(st.sampled_from([0.0, 1e-6, 1e-2]))
    if eps == 0.0:
        x = x + 0.1 * torch.sign(x) + (x == 0)  # keep rows away from all-zero
    check("rms_norm", [x, w, eps], dtype)
    g = data.draw(tensors(shape, dtype, device))
    expected = reference("rms_norm_backward", [g, x, w, eps])
    out = call("rms_norm_backward", [g, x, w, eps])
    # Gradients sum over rows: allow for that in half precision.
    rows = max(x.numel() // max(h, 1), 1)
    assert matches(out, expected, dtype) or dtype in (torch.float16, torch.bfloat16) and all(
        (o.double() - e).abs().max() <= TOL[dtype] * rows * max(e.abs().max().item(), 1) for o, e in zip(out, expected)
    )


@SETTINGS
@given(st.data(), st.lists(dims, min_size=1, max_size=2), dims, dtype_st, device_st)
def test_fused_add_rms_norm(data, lead, h, dtype, device):
    shape = tuple(lead) + (h,)
    x = data.draw(tensors(shape, dtype, device))
    r = data.draw(tensors(shape, dtype, device))
    w = data.draw(tensors((h,), dtype, device))
    check("fused_add_rms_norm", [x, r, w, 1e-5], dtype)


@SETTINGS
@given(st.data(), st.lists(dims, min_size=0, max_size=2), dims, dtype_st, device_st)
def test_silu_and_mul_and_backward(data, lead, d, dtype, device):
    x = data.draw(tensors(tuple(lead) + (2 * d,), dtype, device))
    check("silu_and_mul", [x], dtype)
    g = data.draw(tensors(tuple(lead) + (d,), dtype, device))
    check("silu_and_mul_backward", [g, x], dtype)


@SETTINGS
@given(st.data(), st.lists(dims, min_size=1, max_size=3), dtype_st, device_st)
def test_softmax_and_backward(data, shape, dtype, device):
    x = data.draw(tensors(tuple(shape), dtype, device, -20.0, 20.0))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    check("softmax", [x, dim], dtype)
    y = torch.softmax(x.double(), dim).to(dtype)
    g = data.draw(tensors(tuple(shape), dtype, device))
    check("softmax_backward", [g, y, dim], dtype)


@SETTINGS
@given(st.data(), st.lists(dims, min_size=0, max_size=3), st.floats(-1e3, 1e3), dtype_st, device_st)
def test_scale(data, shape, alpha, dtype, device):
    x = data.draw(tensors(tuple(shape), dtype, device))
    check("scale", [x, alpha], dtype)
    check("scale_", [x.clone(), alpha], dtype)
