"""Eager correctness (every element within its bound of a float64
reference, tests/python/bounds.py), opcheck, gradcheck and errors for
add and matmul in every dtype."""

import pytest
import torch
from torch.library import opcheck

import myns
from bounds import matmul_bound
from op_cases import check_op

MATMUL_SHAPES = [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1)), ((5, 7), (7, 3)), ((33, 17), (17, 65))]
ADD_SHAPES = [(), (0,), (1,), (1, 1), (7,), (3, 5, 2), (2, 0, 4)]


def make(shape, dtype, device, transposed=False):
    if transposed and len(shape) == 2:
        return torch.randn(shape[::-1], dtype=dtype, device=device).t()
    return torch.randn(shape, dtype=dtype, device=device)


# --- add ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", ADD_SHAPES, ids=str)
def test_add_matches_reference(shape, dtype, device):
    a, b = make(shape, dtype, device), make(shape, dtype, device)
    out = torch.ops.myns.add(a, b)
    assert out.shape == a.shape and out.dtype == dtype and out.device == a.device
    assert out.is_contiguous()
    # Same rounding as PyTorch: half types add in float32 and round once.
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    check_op("add", [a, b])


def test_add_strided_inputs(dtype, device):
    base = torch.randn(6, 8, dtype=dtype, device=device)
    a = base.t()  # transposed
    b = torch.randn(16, 6, dtype=dtype, device=device)[::2]  # row-strided
    torch.testing.assert_close(myns.add(a, b), a + b, rtol=0, atol=0)
    c = torch.randn(1, 6, dtype=dtype, device=device).expand(8, 6)  # overlapping strides
    torch.testing.assert_close(myns.add(a, c), a + c, rtol=0, atol=0)


@pytest.mark.parametrize("shape", ADD_SHAPES, ids=str)
def test_add_opcheck(shape, dtype, device):
    a = make(shape, dtype, device).requires_grad_()
    b = make(shape, dtype, device).requires_grad_()
    opcheck(torch.ops.myns.add.default, (a, b))
    opcheck(torch.ops.myns.add.default, (a.detach(), b.detach()))


# --- matmul ------------------------------------------------------------------

@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("transposed", [False, True], ids=["contig", "transposed"])
def test_matmul_matches_reference(shapes, transposed, dtype, device):
    a = make(shapes[0], dtype, device, transposed)
    b = make(shapes[1], dtype, device, transposed)
    (out,) = check_op("matmul", [a, b])  # K == 0: zeros (the bound is the underflow floor)
    assert out.shape == (shapes[0][0], shapes[1][1]) and out.dtype == dtype and out.is_contiguous()


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("transposed", [False, True], ids=["contig", "transposed"])
def test_matmul_opcheck(shapes, transposed, dtype, device):
    a = make(shapes[0], dtype, device, transposed).requires_grad_()
    b = make(shapes[1], dtype, device, transposed).requires_grad_()
    opcheck(torch.ops.myns.matmul.default, (a, b))
    opcheck(torch.ops.myns.matmul.default, (a.detach(), b.detach()))


def test_matmul_large_odd(device):
    a = torch.randn(257, 1031, device=device)
    b = torch.randn(1031, 129, device=device)
    check_op("matmul", [a, b])


# --- gradients ----------------------------------------------------------------

def test_gradcheck(device):
    opts = dict(dtype=torch.float64, device=device, requires_grad=True)
    a, b = torch.randn(4, 3, **opts), torch.randn(3, 5, **opts)
    assert torch.autograd.gradcheck(torch.ops.myns.matmul, (a, b))
    assert torch.autograd.gradgradcheck(torch.ops.myns.matmul, (a, b))
    x, y = torch.randn(2, 3, 4, **opts), torch.randn(2, 3, 4, **opts)
    assert torch.autograd.gradcheck(torch.ops.myns.add, (x, y))
    # Transposed inputs.
    assert torch.autograd.gradcheck(torch.ops.myns.matmul, (b.detach().t().requires_grad_(), a.detach().t().requires_grad_()))


def test_grad_only_where_needed(device):
    a = torch.randn(3, 4, device=device, requires_grad=True)
    b = torch.randn(4, 2, device=device)
    myns.matmul(a, b).sum().backward()
    ones = torch.ones(3, 2, device=device)
    ref = ones.double() @ b.t().double()
    assert (a.grad.double() - ref).abs().le(matmul_bound(ones, b.t(), ref)).all()
    assert b.grad is None


# --- errors -------------------------------------------------------------------

def err(fn, *args, cls=RuntimeError):
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value) is cls, f"raised {type(info.value).__name__}, expected {cls.__name__}: {info.value}"
    msg = str(info.value)
    assert "Exception raised from" not in msg
    return msg


@pytest.mark.parametrize("bad_dtype", [torch.int64, torch.int32, torch.bool, torch.complex64, torch.uint8])
def test_unsupported_dtype(bad_dtype, device):
    """A dtype without a kernel is a NotImplementedError (add takes int32/int64)."""
    a = torch.ones(2, 2, device=device).to(bad_dtype)
    for name in ["add", "matmul"]:
        if name == "add" and bad_dtype in (torch.int32, torch.int64):
            continue
        msg = err(getattr(torch.ops.myns, name), a, a, cls=NotImplementedError)
        assert f"myns::{name}" in msg and "`a`" in msg and "unsupported dtype" in msg
        assert str(bad_dtype) in msg


def test_mismatched_dtypes(device):
    a = torch.ones(2, 2, device=device)
    b = a.double()
    for name in ["add", "matmul"]:
        msg = err(getattr(torch.ops.myns, name), a, b)
        assert f"myns::{name}" in msg and "`b`" in msg and "torch.float64" in msg


def test_shape_errors(device):
    msg = err(torch.ops.myns.matmul, torch.ones(2, 3, device=device), torch.ones(2, 3, device=device))
    assert "myns::matmul" in msg and "`b`" in msg and "rows" in msg
    msg = err(torch.ops.myns.matmul, torch.ones(2, 3, 4, device=device), torch.ones(3, 2, device=device))
    assert "myns::matmul" in msg and "`a`" in msg and "2-D" in msg
    msg = err(torch.ops.myns.matmul, torch.ones(2, 3, device=device), torch.ones(3, device=device))
    assert "`b`" in msg and "2-D" in msg
    msg = err(torch.ops.myns.add, torch.ones(2, 3, device=device), torch.ones(3, 2, device=device))
    assert "myns::add" in msg and "`b`" in msg and "shape" in msg
    msg = err(torch.ops.myns.add, torch.ones(2, 3, device=device), torch.ones(6, device=device))
    assert "myns::add" in msg and "`b`" in msg


def test_mixed_devices():
    other = "cuda" if torch.cuda.is_available() else "meta"
    a, b = torch.ones(2, 2), torch.ones(2, 2, device=other)
    for name in ["add", "matmul"]:
        for x, y in [(a, b), (b, a)]:
            msg = err(getattr(torch.ops.myns, name), x, y)
            assert f"myns::{name}" in msg and ("`a`" in msg or "`b`" in msg) and "cpu" in msg


def test_process_survives_errors():
    for _ in range(3):
        err(torch.ops.myns.matmul, torch.ones(2, 3), torch.ones(2, 3))
    torch.testing.assert_close(myns.add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))


# --- the Python package ---------------------------------------------------------

def test_package_wrappers():
    import inspect

    assert set(myns.op_names()) >= {"add", "matmul"}
    for name in myns.op_names():
        fn = getattr(myns, name)
        assert fn.__doc__ and f"myns::{name}(" in fn.__doc__
        assert hasattr(torch.ops.myns, name)
    sig = inspect.signature(myns.matmul)
    assert list(sig.parameters) == ["a", "b"] and sig.return_annotation is torch.Tensor
    a, b = torch.randn(3, 4), torch.randn(4, 2)
    check_op("matmul", [a, b], impl=lambda a, b: myns.matmul(a=a, b=b))
    assert myns.library_path().endswith(".so")
