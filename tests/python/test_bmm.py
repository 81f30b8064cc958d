"""myns::bmm: eager results against a float64 reference (elementwise bounds,
see test_matmul_kernels.py), opcheck, gradients, torch.compile (static and
dynamic shapes) and errors, on every device and dtype."""

import pytest
import torch
import torch._dynamo.testing
from torch.library import opcheck

import myns
from test_matmul_kernels import check

KIND = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16"}

# (B, M, K, N)
SHAPES = [(1, 1, 1, 1), (3, 5, 7, 2), (2, 33, 17, 65), (4, 0, 3, 2), (2, 3, 0, 4), (0, 2, 3, 4)]


def make(shape, dtype, device, transposed=False):
    """A [B, R, C] tensor; `transposed`: a view of [B, C, R] storage."""
    if transposed:
        b, r, c = shape
        return torch.randn(b, c, r, dtype=dtype, device=device).transpose(1, 2)
    return torch.randn(shape, dtype=dtype, device=device)


def operands(shape, dtype, device, ta=False, tb=False):
    bsz, m, k, n = shape
    return make((bsz, m, k), dtype, device, ta), make((bsz, k, n), dtype, device, tb)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_bmm_matches_reference(shape, layout, dtype, device):
    a, b = operands(shape, dtype, device, layout[0] == "t", layout[1] == "t")
    out = torch.ops.myns.bmm(a, b)
    bsz, m, _, n = shape
    assert out.shape == (bsz, m, n) and out.dtype == dtype and out.device == a.device and out.is_contiguous()
    check(out, a, b, KIND[dtype])
    if shape[2] == 0:
        assert (out == 0).all()  # K == 0 gives zeros


def test_bmm_strided_batches(dtype, device):
    """Batch and row strides that are not those of a contiguous tensor."""
    base = torch.randn(6, 40, 24, dtype=dtype, device=device)
    a = base[::2, 3:20, :10]  # every other batch, offset rows
    b = torch.randn(3, 24, 10, dtype=dtype, device=device).transpose(1, 2)[:, :, 5:17]  # [3, 10, 12]
    c = torch.randn(1, 10, 12, dtype=dtype, device=device).expand(3, 10, 12)  # batch stride 0
    for x, y in [(a, b), (a, c)]:
        check(myns.bmm(x, y), x, y, KIND[dtype])


@pytest.mark.parametrize("shape", SHAPES[:4], ids=str)
@pytest.mark.parametrize("transposed", [False, True], ids=["contig", "transposed"])
def test_bmm_opcheck(shape, transposed, dtype, device):
    a, b = operands(shape, dtype, device, transposed, transposed)
    opcheck(torch.ops.myns.bmm.default, (a.requires_grad_(), b.requires_grad_()))
    opcheck(torch.ops.myns.bmm.default, (a.detach(), b.detach()))


def test_bmm_gradcheck(device):
    opts = dict(dtype=torch.float64, device=device, requires_grad=True)
    a, b = torch.randn(2, 4, 3, **opts), torch.randn(2, 3, 5, **opts)
    assert torch.autograd.gradcheck(torch.ops.myns.bmm, (a, b))
    assert torch.autograd.gradgradcheck(torch.ops.myns.bmm, (a, b))
    at = a.detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
    assert torch.autograd.gradcheck(torch.ops.myns.bmm, (at, b))


def test_bmm_grad_matches_torch(dtype, device):
    a = torch.randn(3, 6, 5, dtype=dtype, device=device, requires_grad=True)
    b = torch.randn(3, 5, 4, dtype=dtype, device=device, requires_grad=True)
    g = torch.randn(3, 6, 4, dtype=dtype, device=device)
    ga, gb = torch.autograd.grad(myns.bmm(a, b), (a, b), g)
    # d/da = g @ b^T, d/db = a^T @ g, each within the bound of that product.
    check(ga, g, b.detach().transpose(1, 2), KIND[dtype])
    check(gb, a.detach().transpose(1, 2), g, KIND[dtype])


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_bmm_compile_fullgraph(dynamic, device):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("inductor")

    @torch.compile(backend=counter, fullgraph=True, dynamic=dynamic)
    def f(a, b):
        return torch.ops.myns.bmm(a, b).relu()

    for bsz, m, k, n in [(2, 3, 4, 5), (3, 7, 2, 9), (4, 11, 13, 6)]:
        a = torch.randn(bsz, m, k, device=device, requires_grad=True)
        b = torch.randn(bsz, k, n, device=device, requires_grad=True)
        out = f(a, b)
        torch.testing.assert_close(out, torch.bmm(a, b).relu())
        ga, gb = torch.autograd.grad(out.sum(), (a, b))
        ra, rb = torch.autograd.grad(torch.bmm(a, b).relu().sum(), (a, b))
        torch.testing.assert_close(ga, ra)
        torch.testing.assert_close(gb, rb)
    if dynamic:
        assert counter.frame_count == 1


def test_bmm_no_graph_breaks(device):
    a, b = torch.randn(2, 3, 4, device=device), torch.randn(2, 4, 5, device=device)
    explanation = torch._dynamo.explain(lambda x, y: torch.ops.myns.bmm(x, y) * 2)(a, b)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def err(fn, *args):
    with pytest.raises((RuntimeError, NotImplementedError)) as info:
        fn(*args)
    msg = str(info.value)
    assert "Exception raised from" not in msg and "myns::bmm" in msg
    return msg


def test_bmm_errors(device):
    t = lambda *s: torch.ones(*s, device=device)  # noqa: E731
    assert "`b`" in err(torch.ops.myns.bmm, t(2, 3, 4), t(3, 4, 5)) and "batch" in err(torch.ops.myns.bmm, t(2, 3, 4), t(3, 4, 5))
    assert "`b`" in err(torch.ops.myns.bmm, t(2, 3, 4), t(2, 5, 5))
    assert "`a`" in err(torch.ops.myns.bmm, t(3, 4), t(2, 4, 5)) and "3-D" in err(torch.ops.myns.bmm, t(3, 4), t(2, 4, 5))
    assert "`b`" in err(torch.ops.myns.bmm, t(2, 3, 4), t(2, 4, 5).double())
    assert "unsupported dtype" in err(torch.ops.myns.bmm, t(2, 3, 4).long(), t(2, 4, 5).long())


def test_bmm_wrapper():
    assert "myns.bmm" in dir(myns) or hasattr(myns, "bmm")
    assert myns.bmm.__doc__ and "myns::bmm(" in myns.bmm.__doc__
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    torch.testing.assert_close(myns.bmm(a=a, b=b), torch.bmm(a, b))
