"""Property tests (hypothesis): random shapes, strides and dtypes for every
op, each element within the op's bound of a float64 reference
(tests/python/bounds.py through op_cases.check_op), on CPU and CUDA (the
CUDA variants skip without a GPU)."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import myns
from conftest import DEVICES
from op_cases import check_op

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# MYNS_HYPOTHESIS_EXAMPLES raises the count for a deeper run (25 keeps make test lean).
SETTINGS = settings(max_examples=int(os.environ.get("MYNS_HYPOTHESIS_EXAMPLES", "25")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
LAYOUTS = ["contiguous", "transposed", "stepped", "offset"]


def make_tensor(shape, dtype, device, layout, seed, lo=-3.0, hi=3.0):
    """A tensor of `shape` with uniform values in [lo, hi) and the given
    layout: contiguous, transposed, sliced with a step, or with a storage
    offset."""
    g = torch.Generator().manual_seed(seed)
    make = lambda s: (torch.rand(s, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype).to(device)  # noqa: E731
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        return make(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if layout == "stepped" and len(shape) >= 1:
        return make(shape[:-1] + (shape[-1] * 2,))[..., ::2]
    if layout == "offset":
        return make((1,) + shape)[0] if not shape else make((2,) + shape)[1]
    return make(shape)


@st.composite
def tensors(draw, shape, dtype, device, lo=-3.0, hi=3.0):
    layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2**31 - 1))
    return make_tensor(shape, dtype, device, layout, seed, lo, hi)


dims = st.integers(1, 40)
dtype_st = st.sampled_from(DTYPES)
on_devices = pytest.mark.parametrize("device", DEVICES)


# The checks, one per op family: test_checks_bite.py calls these same
# functions with broken implementations (`impl`) and expects them to fail.


def check_rms_norm_and_backward(x, w, eps, g, impl=None, impl_backward=None):
    check_op("rms_norm", [x, w, eps], impl=impl)
    check_op("rms_norm_backward", [g, x, w, eps], impl=impl_backward)


def check_matmul(a, b, impl=None):
    check_op("matmul", [a, b], impl=impl)


@on_devices
@SETTINGS
@given(data=st.data(), shape=st.lists(dims, min_size=0, max_size=3), dtype=dtype_st)
def test_add(device, data, shape, dtype):
    a = data.draw(tensors(tuple(shape), dtype, device))
    b = data.draw(tensors(tuple(shape), dtype, device))
    check_op("add", [a, b])


@on_devices
@SETTINGS
@given(data=st.data(), m=dims, k=dims, n=dims, dtype=dtype_st)
def test_matmul(device, data, m, k, n, dtype):
    check_matmul(data.draw(tensors((m, k), dtype, device)), data.draw(tensors((k, n), dtype, device)))


@pytest.mark.skipif("bmm" not in myns.op_names(), reason="no bmm op")
@on_devices
@SETTINGS
@given(data=st.data(), bsz=st.integers(1, 4), m=dims, k=dims, n=dims, dtype=dtype_st)
def test_bmm(device, data, bsz, m, k, n, dtype):
    check_op("bmm", [data.draw(tensors((bsz, m, k), dtype, device)), data.draw(tensors((bsz, k, n), dtype, device))])


@on_devices
@SETTINGS
@given(data=st.data(), lead=st.lists(dims, min_size=0, max_size=2), h=dims, dtype=dtype_st)
def test_rms_norm_and_backward(device, data, lead, h, dtype):
    shape = tuple(lead) + (h,)
    x = data.draw(tensors(shape, dtype, device))
    w = data.draw(tensors((h,), dtype, device))
    eps = data.draw(st.sampled_from([0.0, 1e-6, 1e-2]))
    if eps == 0.0:
        x = x + 0.1 * torch.sign(x) + (x == 0)  # keep rows away from all-zero
    check_rms_norm_and_backward(x, w, eps, data.draw(tensors(shape, dtype, device)))


@on_devices
@SETTINGS
@given(data=st.data(), lead=st.lists(dims, min_size=1, max_size=2), h=dims, dtype=dtype_st)
def test_fused_add_rms_norm(device, data, lead, h, dtype):
    shape = tuple(lead) + (h,)
    x = data.draw(tensors(shape, dtype, device))
    r = data.draw(tensors(shape, dtype, device))
    w = data.draw(tensors((h,), dtype, device))
    check_op("fused_add_rms_norm", [x, r, w, 1e-5])


@on_devices
@SETTINGS
@given(data=st.data(), lead=st.lists(dims, min_size=0, max_size=2), d=dims, dtype=dtype_st)
def test_silu_and_mul_and_backward(device, data, lead, d, dtype):
    x = data.draw(tensors(tuple(lead) + (2 * d,), dtype, device))
    check_op("silu_and_mul", [x])
    g = data.draw(tensors(tuple(lead) + (d,), dtype, device))
    check_op("silu_and_mul_backward", [g, x])


@on_devices
@SETTINGS
@given(data=st.data(), shape=st.lists(dims, min_size=1, max_size=3), dtype=dtype_st)
def test_softmax_and_backward(device, data, shape, dtype):
    x = data.draw(tensors(tuple(shape), dtype, device, -20.0, 20.0))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    check_op("softmax", [x, dim])
    y = torch.softmax(x.double(), dim).to(dtype)
    g = data.draw(tensors(tuple(shape), dtype, device))
    check_op("softmax_backward", [g, y, dim])


@on_devices
@SETTINGS
@given(data=st.data(), shape=st.lists(dims, min_size=0, max_size=3), alpha=st.floats(-1e3, 1e3), dtype=dtype_st)
def test_scale(device, data, shape, alpha, dtype):
    x = data.draw(tensors(tuple(shape), dtype, device))
    check_op("scale", [x, alpha])
    check_op("scale_", [x.clone(), alpha])
