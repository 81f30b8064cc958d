"""rms_norm, fused_add_rms_norm, silu_and_mul, softmax, scale / scale_ and
their backward ops: every element against a float64 reference within the
op's bound (tests/python/bounds.py, through op_cases.check_op: canaries
around the arguments too), opcheck, gradcheck, compile, errors."""

import pytest
import torch
import torch.nn.functional as F
from torch.library import opcheck

import myns
from bounds import assert_same, op_bounds
from conftest import DTYPES
from cuda_paths import build_covers, check_four_pack_path
from op_cases import _rms, assert_matches, check_op, expect, norm_input, softmax_input

SHAPES = [(1, 8), (3, 5, 6), (7, 130), (2, 3, 1024), (0, 16)]


def rand(shape, dtype, device, scale=1.0):
    return (torch.randn(shape, dtype=torch.float64, device=device) * scale).to(dtype)


ref_rms_norm = _rms


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rms_norm(shape, dtype, device):
    x, w = norm_input(shape, dtype, device), rand(shape[-1:], dtype, device)
    (out,) = check_op("rms_norm", [x, w, 1e-6])
    # Within the same bound of PyTorch's own rms_norm (both are within it of
    # the float64 result, so at most twice apart).
    if x.numel():
        ref = ref_rms_norm(x, w, 1e-6)
        (b,) = op_bounds("rms_norm", [x, w, 1e-6], (ref,))
        assert ((out.double() - F.rms_norm(x, shape[-1:], w, 1e-6).double()).abs() <= 2 * b).all()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_add_rms_norm(shape, dtype, device):
    x, r, w = norm_input(shape, dtype, device), norm_input(shape, dtype, device), rand(shape[-1:], dtype, device)
    x0, r0 = x.clone(), r.clone()
    assert myns.fused_add_rms_norm(x0.clone(), r0.clone(), w, 1e-5) is None
    xo, ro = check_op("fused_add_rms_norm", [x, r, w, 1e-5])
    torch.testing.assert_close(ro, r0 + x0, rtol=0, atol=0)  # same rounding as torch's add


def test_fused_add_rms_norm_strided(device):
    x = torch.randn(16, 12, device=device).t()  # [12, 16] non-contiguous
    r = torch.randn(12, 32, device=device)[:, ::2]  # non-contiguous
    w = torch.randn(16, device=device)
    x0, r0 = x.clone(), r.clone()
    # check_op keeps the layouts (canaries fill the gaps of r's rows).
    xo, ro = check_op("fused_add_rms_norm", [x, r, w, 1e-6])
    assert xo.stride() == x.stride() and ro.stride() == r.stride()
    torch.testing.assert_close(ro, r0 + x0, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(1, 2), (3, 5, 6), (7, 130), (2, 3, 2048), (0, 16)], ids=str)
def test_silu_and_mul(shape, dtype, device):
    check_op("silu_and_mul", [rand(shape, dtype, device, 3.0)])


@pytest.mark.parametrize("shape,dim", [((1, 8), -1), ((3, 5, 6), 1), ((7, 130), 0), ((2, 3, 1024), -1), ((0, 16), 1), ((), 0)], ids=str)
def test_softmax(shape, dim, dtype, device):
    x = softmax_input(shape, dim, dtype, device) if shape else rand(shape, dtype, device)
    (out,) = check_op("softmax", [x, dim])
    assert out.is_contiguous()


# Every launch shape of the row kernels (src/rowwise.rs): a warp per row for
# short rows, a block per row, one pack per thread when rows are few, rows
# longer than the threads can cache (re-read pass), and odd lengths (scalar
# kernels).
ROW_SHAPES = [(1000, 64), (300, 256), (2, 4096), (1, 16384), (200, 16384), (3, 40000), (150, 40002), (5, 1001),
              # More rows than one wave holds: softmax and the residual-add norms keep
              # their register build there (rows covered exactly, and not); rms_norm
              # takes its four-pack build (rows of 8192).
              (1100, 4096), (1200, 3000), (600, 8192)]
# float64 at the large shapes is covered by float32 (same kernels, slow reference).
ROW_CASES = [(s, d) for s in ROW_SHAPES for d in DTYPES if not (d == torch.float64 and s[0] * s[1] > 10**6)]


def check_row_ops(shape, dtype, device, impls=None):
    """Every row op (forward and backward) at one shape, through check_op;
    `impls` replaces ops by stand-ins (test_checks_bite.py's broken ones)."""
    impl = (impls or {}).get
    x, w, r = norm_input(shape, dtype, device, 2.0), rand(shape[-1:], dtype, device), norm_input(shape, dtype, device)
    check_op("rms_norm", [x, w, 1e-6], impl=impl("rms_norm"))
    check_op("softmax", [softmax_input(shape, -1, dtype, device, 2.0), -1], impl=impl("softmax"))
    check_op("fused_add_rms_norm", [x.clone(), r.clone(), w, 1e-6], impl=impl("fused_add_rms_norm"))
    g = rand(shape, dtype, device)
    check_op("rms_norm_backward", [g, x, w, 1e-6], impl=impl("rms_norm_backward"))
    y = torch.softmax(softmax_input(shape, -1, torch.float64, device, 2.0), -1).to(dtype)
    check_op("softmax_backward", [g, y, -1], impl=impl("softmax_backward"))
    xs = rand(shape[:-1] + (shape[-1] // 2 * 2,), dtype, device, 3.0)
    check_op("silu_and_mul", [xs], impl=impl("silu_and_mul"))
    check_op("silu_and_mul_backward", [rand(shape[:-1] + (shape[-1] // 2,), dtype, device), xs], impl=impl("silu_and_mul_backward"))


@pytest.mark.parametrize("shape,dtype", ROW_CASES, ids=lambda p: str(p).removeprefix("torch."))
def test_row_ops_every_launch_shape(shape, dtype, device):
    check_row_ops(shape, dtype, device)


# The forward reductions' builds forced one by one (`MYNS_ROW_KERNEL`, see
# src/rowwise.rs): register-resident at one or two packs per thread (a warp
# or a block per row), and the general one (cached and re-read passes).
BUILDS = ["r1", "r2", "r2:32:8", "r1:1024", "general", "general:32:8", "general:512"]
BUILD_SHAPES = [(37, 64), (9, 200), (1000, 8), (3, 2048), (2, 4096), (2, 3, 16000), (300, 1000), (5, 1001)]


@pytest.mark.parametrize("device", ["cuda"])
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shape", BUILD_SHAPES, ids=str)
def test_forward_builds(build, shape, dtype, device, kernel_override):
    kernel_override("MYNS_ROW_KERNEL", build)
    x, w, r = norm_input(shape, dtype, device, 2.0), rand(shape[-1:], dtype, device), norm_input(shape, dtype, device)
    ops = {
        "rms_norm": lambda: check_op("rms_norm", [x, w, 1e-6]),
        "softmax": lambda: check_op("softmax", [softmax_input(shape, -1, dtype, device, 2.0), -1]),
    }

    def fused():
        _, ro = check_op("fused_add_rms_norm", [x.clone(), r.clone(), w, 1e-6])
        torch.testing.assert_close(ro, r + x, rtol=0, atol=0)

    ops["fused_add_rms_norm"] = fused
    covers = build_covers(build, shape, dtype)
    for name, run in ops.items():
        if covers:
            run()
        else:
            with pytest.raises(ValueError, match=f"myns::{name}: MYNS_ROW_KERNEL=.* do not cover"):
                run()


@pytest.mark.parametrize("device", ["cuda"])
def test_four_pack_build(dtype, device, kernel_override):
    """The `r4` build forced on rms_norm and layer_norm: rows the threads
    cover exactly (a warp per row, a block per row, up to 1024 threads), on
    16-byte packs and, one element off alignment, on single elements;
    refused where it would not cover a row exactly, and by an op without it."""
    for shape in [(37, 1024), (3, 5, 2048), (2, 4096)]:
        check_four_pack_path("r4", dtype, shape, with_opcheck=False, device=device)
    kernel_override("MYNS_ROW_KERNEL", "r4")
    x = rand((4, 1000), dtype, device)
    with pytest.raises(ValueError, match=r"myns::rms_norm: MYNS_ROW_KERNEL=`r4`: .* do not cover a row of .* exactly"):
        myns.rms_norm(x, x[0], 1e-6)
    with pytest.raises(ValueError, match=r"myns::layer_norm: MYNS_ROW_KERNEL=`r4`: .* do not cover a row of .* exactly"):
        myns.layer_norm(x, x[0], None, 1e-5)
    with pytest.raises(ValueError, match=r"myns::softmax: MYNS_ROW_KERNEL=`r4`: the build must be r1, r2 or general"):
        myns.softmax(rand((4, 1024), dtype, device), -1)


@pytest.mark.parametrize("build", ["auto", "general"])
def test_softmax_extremes(build, device, kernel_override):
    kernel_override("MYNS_ROW_KERNEL", build)
    inf = float("inf")
    x = torch.tensor([[0.0, -inf, 1.0], [1e4, -1e4, 1e4], [-inf, -inf, -inf], [-3e38, 3e38, 0.0]], device=device)
    check_op("softmax", [x, -1])
    for dtype in [torch.float16, torch.bfloat16]:
        xh = torch.tensor([[0.0, -inf, 1.0], [6e4 if dtype == torch.float16 else 1e38, 0.0, 1.0]], device=device, dtype=dtype)
        check_op("softmax", [xh, -1])
    # Rows the register-resident builds cover exactly (no bounds checks): the
    # same extremes at whole-pack widths, an all -inf row among them.
    for dtype, width in [(torch.float32, 256), (torch.bfloat16, 2048)]:
        xw = torch.randn(4, width, device=device, dtype=dtype)
        xw[0, ::3] = -inf
        xw[1, 5] = 1e4 if dtype == torch.float32 else 1e38
        xw[2] = -inf
        xw[3, :7] = -3e38
        check_op("softmax", [xw, -1])


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 7), (1000, 3)], ids=str)
def test_scale(shape, dtype, device):
    x = rand(shape, dtype, device)
    check_op("scale", [x, -1.75])
    y = x.clone()
    assert myns.scale_(y.clone(), 0.5) is None
    check_op("scale_", [y, 0.5])
    z = torch.randn(6, 8, device=device, dtype=dtype).t()  # strided, in place
    (zo,) = check_op("scale_", [z, 2.0])
    assert zo.stride() == z.stride()


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


def test_gradients_match_reference(dtype, device):
    """Autograd through myns.rms_norm reaches rms_norm_backward: both
    gradients within that op's bounds of the float64 ones."""
    x = norm_input((4, 64), dtype, device)
    w = torch.randn(64, device=device, dtype=dtype)
    g = torch.randn(4, 64, device=device, dtype=dtype)
    expected = expect("rms_norm_backward", [g, x, w, 1e-6])
    xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
    (myns.rms_norm(xa, wa, 1e-6) * g).sum().backward()
    assert_matches((xa.grad, wa.grad), expected)


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
        # The same myns kernels on the same values: identical results.
        assert_same(out_c, out_e, "compiled output")
        assert_same(xc, x, "x after the in-place op")  # in-place effects preserved
        assert_same(rc, r, "residual after the in-place op")


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
    # Same myns kernels (the loss's 2 * y is exact in both): identical gradients.
    assert_same(gx_c, gx_e, "grad x")
    assert_same(gw_c, gw_e, "grad w")


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
