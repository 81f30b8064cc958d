"""rms_norm, fused_add_rms_norm, silu_and_mul, softmax, scale / scale_ and
their backward ops: float64 references, opcheck, gradcheck, compile, errors."""

import pytest
import torch
import torch.nn.functional as F
from torch.library import opcheck

import myns
from conftest import rel_err

SHAPES = [(1, 8), (3, 5, 6), (7, 130), (2, 3, 1024), (0, 16)]
# One rounding of a float32-accumulated result; softmax/silu add an exp.
TOL = {torch.float64: 1e-12, torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def rand(shape, dtype, device, scale=1.0):
    return (torch.randn(shape, dtype=torch.float64, device=device) * scale).to(dtype)


def check(out, ref, dtype):
    assert out.dtype == dtype and out.shape == ref.shape
    if ref.numel():
        assert rel_err(out, ref) <= TOL[dtype], rel_err(out, ref)


def ref_rms_norm(x, w, eps):
    x, w = x.double(), w.double()
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * w


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rms_norm(shape, dtype, device):
    x, w = rand(shape, dtype, device), rand(shape[-1:], dtype, device)
    out = myns.rms_norm(x, w, 1e-6)
    check(out, ref_rms_norm(x, w, 1e-6), dtype)
    # Numerics close to PyTorch's own rms_norm.
    if x.numel():
        assert rel_err(out, F.rms_norm(x, shape[-1:], w, 1e-6)) <= 2 * TOL[dtype]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_add_rms_norm(shape, dtype, device):
    x, r, w = rand(shape, dtype, device), rand(shape, dtype, device), rand(shape[-1:], dtype, device)
    x0, r0 = x.clone(), r.clone()
    assert myns.fused_add_rms_norm(x, r, w, 1e-5) is None
    torch.testing.assert_close(r, r0 + x0, rtol=0, atol=0)  # same rounding as torch's add
    check(x, ref_rms_norm(r, w, 1e-5), dtype)


def test_fused_add_rms_norm_strided(device):
    x = torch.randn(16, 12, device=device).t()  # [12, 16] non-contiguous
    r = torch.randn(12, 32, device=device)[:, ::2]  # non-contiguous
    w = torch.randn(16, device=device)
    x0, r0 = x.clone(), r.clone()
    myns.fused_add_rms_norm(x, r, w, 1e-6)
    torch.testing.assert_close(r, r0 + x0)
    torch.testing.assert_close(x, F.rms_norm(r0 + x0, (16,), w, 1e-6))


@pytest.mark.parametrize("shape", [(1, 2), (3, 5, 6), (7, 130), (2, 3, 2048), (0, 16)], ids=str)
def test_silu_and_mul(shape, dtype, device):
    x = rand(shape, dtype, device, 3.0)
    d = shape[-1] // 2
    xd = x.double()
    check(myns.silu_and_mul(x), F.silu(xd[..., :d]) * xd[..., d:], dtype)


@pytest.mark.parametrize("shape,dim", [((1, 8), -1), ((3, 5, 6), 1), ((7, 130), 0), ((2, 3, 1024), -1), ((0, 16), 1), ((), 0)], ids=str)
def test_softmax(shape, dim, dtype, device):
    x = rand(shape, dtype, device, 4.0)
    out = myns.softmax(x, dim)
    assert out.is_contiguous()
    check(out, torch.softmax(x.double(), dim), dtype)


# Every launch shape of the row kernels (src/rowwise.rs): a warp per row for
# short rows, a block per row, one pack per thread when rows are few, rows
# longer than the threads can cache (re-read pass), and odd lengths (scalar
# kernels).
ROW_SHAPES = [(1000, 64), (300, 256), (2, 4096), (1, 16384), (200, 16384), (3, 40000), (150, 40002), (5, 1001)]


@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
def test_row_ops_every_launch_shape(shape, dtype, device):
    if dtype == torch.float64 and shape[0] * shape[1] > 10**6:
        pytest.skip("large float64 case: covered by float32")
    x, w, r = rand(shape, dtype, device, 2.0), rand(shape[-1:], dtype, device), rand(shape, dtype, device)
    check(myns.rms_norm(x, w, 1e-6), ref_rms_norm(x, w, 1e-6), dtype)
    check(myns.softmax(x, -1), torch.softmax(x.double(), -1), dtype)
    xf, rf = x.clone(), r.clone()
    myns.fused_add_rms_norm(xf, rf, w, 1e-6)
    check(xf, ref_rms_norm(r + x, w, 1e-6), dtype)
    # Backward kernels: against float64 autograd of the references.
    g = rand(shape, dtype, device)
    xd, wd = x.double().requires_grad_(), w.double().requires_grad_()
    gx, gw = torch.autograd.grad((ref_rms_norm(xd, wd, 1e-6) * g.double()).sum(), (xd, wd))
    mx, mw = myns.rms_norm_backward(g, x, w, 1e-6)
    check(mx, gx, dtype)
    assert rel_err(mw, gw) <= 4 * TOL[dtype]  # a sum over rows
    y = torch.softmax(x.double(), -1).to(dtype)
    yd = y.double()
    check(myns.softmax_backward(g, y, -1), yd * (g.double() - (g.double() * yd).sum(-1, keepdim=True)), dtype)


# The forward reductions' builds forced one by one (`MYNS_ROW_KERNEL`, see
# src/rowwise.rs): register-resident at one or two packs per thread (a warp
# or a block per row), and the general one (cached and re-read passes).
BUILDS = ["r1", "r2", "r2:32:8", "r1:1024", "general", "general:32:8", "general:512"]


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shape", [(37, 64), (9, 200), (1000, 8), (3, 2048), (2, 4096), (2, 3, 16000), (300, 1000), (5, 1001)], ids=str)
def test_forward_builds(build, shape, dtype, device, kernel_override):
    if device != "cuda":
        pytest.skip("CUDA builds")
    kernel_override("MYNS_ROW_KERNEL", build)
    x, w, r = rand(shape, dtype, device, 2.0), rand(shape[-1:], dtype, device), rand(shape, dtype, device)
    ops = {
        "rms_norm": lambda: check(myns.rms_norm(x, w, 1e-6), ref_rms_norm(x, w, 1e-6), dtype),
        "softmax": lambda: check(myns.softmax(x, -1), torch.softmax(x.double(), -1), dtype),
    }

    def fused():
        xf, rf = x.clone(), r.clone()
        myns.fused_add_rms_norm(xf, rf, w, 1e-6)
        torch.testing.assert_close(rf, r + x, rtol=0, atol=0)
        check(xf, ref_rms_norm(r + x, w, 1e-6), dtype)

    ops["fused_add_rms_norm"] = fused
    pack = 16 // x.element_size() if shape[-1] % (16 // x.element_size()) == 0 else 1  # else scalar kernels
    parts = build.split(":")
    regs = {"r1": 1, "r2": 2}.get(parts[0])
    threads = int(parts[1]) if len(parts) > 1 else 1024
    covers = regs is None or threads * regs >= shape[-1] // pack
    for name, run in ops.items():
        if covers:
            run()
        else:
            with pytest.raises(ValueError, match=f"myns::{name}: MYNS_ROW_KERNEL=.* do not cover"):
                run()


@pytest.mark.parametrize("build", ["auto", "general"])
def test_softmax_extremes(build, device, kernel_override):
    kernel_override("MYNS_ROW_KERNEL", build)
    inf = float("inf")
    x = torch.tensor([[0.0, -inf, 1.0], [1e4, -1e4, 1e4], [-inf, -inf, -inf], [-3e38, 3e38, 0.0]], device=device)
    out = myns.softmax(x, -1)
    torch.testing.assert_close(out, torch.softmax(x, -1), equal_nan=True)
    for dtype in [torch.float16, torch.bfloat16]:
        xh = torch.tensor([[0.0, -inf, 1.0], [6e4 if dtype == torch.float16 else 1e38, 0.0, 1.0]], device=device, dtype=dtype)
        torch.testing.assert_close(myns.softmax(xh, -1), torch.softmax(xh.float(), -1).to(dtype))


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 7), (1000, 3)], ids=str)
def test_scale(shape, dtype, device):
    x = rand(shape, dtype, device)
    check(myns.scale(x, -1.75), x.double() * -1.75, dtype)
    y = x.clone()
    assert myns.scale_(y, 0.5) is None
    check(y, x.double() * 0.5, dtype)
    z = torch.randn(6, 8, device=device, dtype=dtype).t()  # strided, in place
    z0 = z.clone()
    myns.scale_(z, 2.0)
    torch.testing.assert_close(z, z0 * 2)


# --- opcheck ----------------------------------------------------------------------

def opcheck_cases(dtype, device):
    g = dict(dtype=dtype, device=device)
    x = torch.randn(3, 5, 8, **g)
    w = torch.randn(8, **g)
    yield torch.ops.myns.rms_norm.default, (x.requires_grad_(), w.requires_grad_(), 1e-6)
    yield torch.ops.myns.rms_norm_backward.default, (torch.randn_like(x), x.detach(), w.detach(), 1e-6)
    yield torch.ops.myns.fused_add_rms_norm.default, (torch.randn(3, 8, **g), torch.randn(3, 8, **g), w.detach(), 1e-6)
    yield torch.ops.myns.silu_and_mul.default, (torch.randn(4, 10, **g).requires_grad_(),)
    yield torch.ops.myns.silu_and_mul_backward.default, (torch.randn(4, 5, **g), torch.randn(4, 10, **g))
    yield torch.ops.myns.softmax.default, (torch.randn(4, 7, **g).requires_grad_(), 0)
    yield torch.ops.myns.softmax.default, (torch.randn(2, 3, 33, **g).requires_grad_(), -1)
    y = torch.softmax(torch.randn(4, 7, **g), 1)
    yield torch.ops.myns.softmax_backward.default, (torch.randn_like(y), y, 1)
    yield torch.ops.myns.scale.default, (torch.randn(5, 3, **g).t().requires_grad_(), 1.5)
    yield torch.ops.myns.scale_.default, (torch.randn(5, 3, **g), 1.5)


@pytest.mark.parametrize("case", range(10))
def test_opcheck(case, dtype, device):
    op, args = list(opcheck_cases(dtype, device))[case]
    opcheck(op, args)


# --- gradients ----------------------------------------------------------------------

def test_gradcheck(device):
    o = dict(dtype=torch.float64, device=device, requires_grad=True)
    x, w = torch.randn(3, 4, 6, **o), torch.randn(6, **o)
    assert torch.autograd.gradcheck(lambda a, b: myns.rms_norm(a, b, 1e-5), (x, w))
    assert torch.autograd.gradcheck(myns.silu_and_mul, (torch.randn(3, 8, **o),))
    assert torch.autograd.gradcheck(lambda a: myns.softmax(a, 1), (x,))
    assert torch.autograd.gradcheck(lambda a: myns.softmax(a, -1), (x,))
    assert torch.autograd.gradcheck(lambda a: myns.scale(a, -2.5), (x,))
    # strided inputs
    xt = torch.randn(6, 5, **o).t()
    assert torch.autograd.gradcheck(lambda a, b: myns.rms_norm(a, b, 1e-5), (xt, torch.randn(6, **o)))


def test_gradients_match_torch(dtype, device):
    x = torch.randn(4, 64, device=device, dtype=torch.float32)
    w = torch.randn(64, device=device, dtype=torch.float32)
    g = torch.randn(4, 64, device=device, dtype=torch.float32)
    xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
    xb, wb = x.clone().requires_grad_(), w.clone().requires_grad_()
    (myns.rms_norm(xa, wa, 1e-6) * g).sum().backward()
    (F.rms_norm(xb, (64,), wb, 1e-6) * g).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(wa.grad, wb.grad, rtol=1e-4, atol=1e-5)


# --- torch.compile -------------------------------------------------------------------

def block(x, residual, w, w_up):
    myns.fused_add_rms_norm(x, residual, w, 1e-6)
    h = myns.silu_and_mul(myns.matmul(x, w_up))
    myns.scale_(h, 0.5)
    return myns.softmax(myns.scale(h, 2.0), -1)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_with_inplace_ops(dynamic, device):
    torch._dynamo.reset()
    w, w_up = torch.randn(16, device=device), torch.randn(16, 32, device=device)
    explanation = torch._dynamo.explain(block)(torch.randn(4, 16, device=device), torch.randn(4, 16, device=device), w, w_up)
    assert explanation.graph_break_count == 0
    compiled = torch.compile(block, fullgraph=True, dynamic=dynamic)
    for rows in [4, 9, 13]:
        x, r = torch.randn(rows, 16, device=device), torch.randn(rows, 16, device=device)
        xc, rc = x.clone(), r.clone()
        out_e = block(x, r, w, w_up)
        out_c = compiled(xc, rc, w, w_up)
        torch.testing.assert_close(out_c, out_e)
        torch.testing.assert_close(xc, x)  # in-place effects preserved
        torch.testing.assert_close(rc, r)


def test_compile_training(device):
    torch._dynamo.reset()
    w = torch.randn(32, device=device, requires_grad=True)

    def loss_fn(x, w):
        h = myns.rms_norm(x, w, 1e-6)
        return myns.softmax(myns.silu_and_mul(h), -1).square().sum()

    x = torch.randn(8, 32, device=device, requires_grad=True)
    compiled = torch.compile(loss_fn, fullgraph=True, dynamic=True)
    gx_c, gw_c = torch.autograd.grad(compiled(x, w), (x, w))
    gx_e, gw_e = torch.autograd.grad(loss_fn(x, w), (x, w))
    torch.testing.assert_close(gx_c, gx_e)
    torch.testing.assert_close(gw_c, gw_e)


# --- errors ----------------------------------------------------------------------------

def err(fn, *args, cls=RuntimeError):
    """The message of the error `fn(*args)` raises, which must be of class `cls`."""
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value) is cls, f"raised {type(info.value).__name__}, expected {cls.__name__}: {info.value}"
    return str(info.value)


def test_errors(device):
    x = torch.randn(3, 5, device=device)
    m = err(myns.rms_norm, x, torch.ones(4, device=device), 1e-6)
    assert "myns::rms_norm" in m and "`weight`" in m
    m = err(myns.rms_norm, x, torch.ones(5, 1, device=device), 1e-6)
    assert "`weight`" in m and "1-D" in m
    m = err(myns.rms_norm, x, torch.ones(5, device=device), -1e-6, cls=ValueError)
    assert "`eps`" in m
    m = err(myns.rms_norm, x, torch.ones(5, device=device), float("nan"), cls=ValueError)
    assert "`eps`" in m
    m = err(myns.rms_norm, x, torch.ones(5, device=device, dtype=torch.float64), 1e-6)
    assert "`weight`" in m and "dtype" in m
    m = err(myns.silu_and_mul, x)
    assert "myns::silu_and_mul" in m and "`x`" in m and "even" in m
    for dim in [2, -3, 100]:
        m = err(myns.softmax, x, dim, cls=IndexError)
        assert "myns::softmax" in m and "`dim`" in m
    m = err(myns.fused_add_rms_norm, x, torch.randn(3, 4, device=device), torch.ones(5, device=device), 1e-6)
    assert "myns::fused_add_rms_norm" in m and "`residual`" in m
    m = err(myns.fused_add_rms_norm, x, x, torch.ones(5, device=device), 1e-6)
    assert "`x`" in m and "`residual`" in m and "overlaps" in m
    # Partly overlapping in-place arguments (rows 0-2 and 1-3 of one buffer).
    buf = torch.randn(4, 5, device=device)
    before = buf.clone()
    m = err(myns.fused_add_rms_norm, buf[:3], buf[1:], torch.ones(5, device=device), 1e-6)
    assert "`x`" in m and "`residual`" in m and "overlaps" in m
    assert torch.equal(buf, before), "nothing is written when the call fails"
    m = err(myns.scale_, torch.ones(1, 3, device=device).expand(2, 3), 2.0)
    assert "myns::scale_" in m and "`x`" in m and "overlapping" in m
    m = err(myns.scale, torch.ones(3, dtype=torch.int8, device=device), 2.0, cls=NotImplementedError)
    assert "myns::scale" in m and "`x`" in m and "torch.int8" in m
    m = err(myns.silu_and_mul_backward, torch.randn(3, 3, device=device), torch.randn(3, 8, device=device))
    assert "`grad`" in m
    # A leaf that requires grad can't be scaled in place (PyTorch's own rule).
    err(myns.scale_, torch.ones(3, device=device, requires_grad=True), 2.0)
    # Double backward through a backward op raises instead of returning a wrong gradient.
    xg = torch.randn(3, 4, device=device, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(myns.softmax(xg, -1)[:, 0].sum(), xg, create_graph=True)
    err(lambda: g.sum().backward())
