"""Proof that the checks bite: deliberately broken implementations of the
ops, each run against THE SAME checks the real op tests call (the same
check functions, input generators and bounds: op_cases.check_op with its
canary guards, tests/python/bounds.py), must be rejected. A variant that
slips through fails this test. Each control run of the real op on the same
inputs must pass, so a rejection is the defect's doing, not the input's.

Broken variants are Python stand-ins with the op's signature: the float64
reference (or, where the defect is about float32 arithmetic, the op's
accumulation type) with one defect added, the result in the op's dtype.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from bounds import U_TF32, acc_dtype
from op_cases import CASES, EPS, check_op, norm_input, softmax_input
from test_llm_ops import check_row_ops
from test_properties import check_matmul, check_rms_norm_and_backward, make_tensor

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
HALF = [torch.float16, torch.bfloat16]


# ---------------------------------------------------------------- correct pieces


def _rms(x, w, eps, n=None):
    xd = x.double()
    n = n or x.shape[-1]
    ms = xd.square().sum(-1, keepdim=True) / x.shape[-1] if n == x.shape[-1] else xd[..., :n].square().sum(-1, keepdim=True) / x.shape[-1]
    return xd * torch.rsqrt(ms + eps) * w.double()


def _rms_backward(g, x, w, eps):
    xd = x.double().requires_grad_()
    wd = w.double().requires_grad_()
    return torch.autograd.grad(_rms(xd, wd, eps), (xd, wd), g.double())


def _softmax(x, dim):
    return torch.softmax(x.double(), dim)


def _silu(x):
    d = x.shape[-1] // 2
    return F.silu(x.double()[..., :d]) * x.double()[..., d:]


def _one_past_the_end(t):
    """A one-element view of the memory just after `t`'s last element (the
    kind of write an off-by-one store loop makes)."""
    last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return t.as_strided((1,), (1,), last + 1)


# ---------------------------------------------------------------- broken variants


def rms_norm_drop_last(x, w, eps):
    """Loop bound one short: the last element of each row left out of the
    mean and never written (0)."""
    y = _rms(x, w, eps, n=x.shape[-1] - 1)
    y[..., -1] = 0
    return y.to(x.dtype)


def softmax_drop_last(x, dim):
    """The last element of each row neither summed nor written (0)."""
    xm = x.double().movedim(dim, -1)
    e = (xm - xm.amax(-1, keepdim=True)).exp()
    y = e / e[..., :-1].sum(-1, keepdim=True)
    y[..., -1] = 0
    return y.movedim(-1, dim).to(x.dtype).contiguous()


def silu_and_mul_drop_last(x):
    y = _silu(x)
    y[..., -1] = 0
    return y.to(x.dtype)


def rms_norm_ignores_eps(x, w, eps):
    return _rms(x, w, 0.0).to(x.dtype)


def fused_add_rms_norm_ignores_eps(x, r, w, eps):
    r.copy_((r.double() + x.double()).to(r.dtype))
    x.copy_(_rms(r, w, 0.0).to(x.dtype))


def rms_norm_backward_ignores_eps(g, x, w, eps):
    gx, gw = _rms_backward(g, x, w, 0.0)
    return gx.to(x.dtype), gw.to(w.dtype)


def _tf32(t):
    """Round float32 to TF32 (10 mantissa bits), to nearest even."""
    bits = t.contiguous().view(torch.int32)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF
    return rounded.view(torch.float32).reshape(t.shape)


def matmul_tf32(a, b):
    """A float32 product that silently used TF32 tensor cores (operands
    rounded to 10 mantissa bits, exact products, float32 result)."""
    return (_tf32(a).double() @ _tf32(b).double()).to(a.dtype)


def matmul_drops_last_k(a, b):
    """The last term of every dot product left out (a k-loop one short)."""
    return (a.double()[..., :-1] @ b.double()[..., :-1, :]).to(a.dtype)


def rms_norm_backward_zero_grad_weight(g, x, w, eps):
    gx, _ = _rms_backward(g, x, w, eps)
    return gx.to(x.dtype), torch.zeros_like(w)


def rms_norm_backward_zero_grad_x(g, x, w, eps):
    _, gw = _rms_backward(g, x, w, eps)
    return torch.zeros_like(x), gw.to(w.dtype)


def silu_and_mul_backward_zeros(g, x):
    return torch.zeros_like(x)


def softmax_backward_zeros(g, y, dim):
    return torch.zeros_like(y)


def silu_and_mul_swapped(x):
    """silu of the second half times the first."""
    d = x.shape[-1] // 2
    return (F.silu(x.double()[..., d:]) * x.double()[..., :d]).to(x.dtype)


def _softmax_acc(x, dim, lo, hi):
    """Softmax in the op's accumulation type with the max taken over the
    elements lo:hi of each row only: mathematically the same softmax, but
    exp overflows when the true maximum is left out."""
    xa = x.to(acc_dtype(x.dtype)).movedim(dim, -1)
    m = xa[..., lo:hi].amax(-1, keepdim=True)
    e = (xa - m).exp()
    return (e / e.sum(-1, keepdim=True)).movedim(-1, dim).to(x.dtype).contiguous()


def softmax_max_skips_last(x, dim):
    return _softmax_acc(x, dim, 0, x.shape[dim] - 1)


def softmax_max_skips_first(x, dim):
    return _softmax_acc(x, dim, 1, x.shape[dim])


def scale__writes_past_the_end(x, alpha):
    x.copy_((x.double() * alpha).to(x.dtype))
    _one_past_the_end(x).fill_(0)


def fused_add_rms_norm_writes_past_the_end(x, r, w, eps):
    r.copy_((r.double() + x.double()).to(r.dtype))
    x.copy_(_rms(r, w, eps).to(x.dtype))
    _one_past_the_end(r).fill_(0)


def rms_norm_shifted_by_one(x, w, eps):
    """Each result stored one element later (an off-by-one output index):
    the last of each row lands on the next row's first."""
    y = _rms(x, w, eps).to(x.dtype).reshape(-1)
    out = torch.zeros_like(y)
    out[1:] = y[:-1]
    return out.reshape(x.shape)


def add_writes_into_its_input(a, b):
    """Right answer, but also stored into `a` (a read-only argument)."""
    out = (a.double() + b.double()).to(a.dtype)
    a.copy_(out)
    return out.clone()


def softmax_reads_past_the_end(x, dim):
    """Each row's sum also reads the element after the row's end (for the
    last row: the memory after the tensor)."""
    xm = x.movedim(dim, -1)
    n = xm.shape[-1]
    wide = xm.as_strided(xm.shape[:-1] + (n + 1,), xm.stride(), xm.storage_offset()).double()
    e = (xm.double() - xm.double().amax(-1, keepdim=True)).exp()
    s = (wide - xm.double().amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)
    return (e / s).movedim(-1, dim).to(x.dtype).contiguous()


def flce_train_sum_for_mean(h, w, t, ignore, reduction):
    """Gradients of the summed loss where the mean was asked (1/count lost)."""
    loss = torch.ops.myns.fused_linear_cross_entropy(h, w, t, ignore, reduction)
    one = torch.ones((), dtype=h.dtype)
    return (loss, *torch.ops.myns.fused_linear_cross_entropy_backward(one, h, w, t, ignore, "sum"))


def flce_train_drops_last_row(h, w, t, ignore, reduction):
    """The last row's gradient never formed (a chunk loop one row short)."""
    loss = torch.ops.myns.fused_linear_cross_entropy(h, w, t, ignore, reduction)
    one = torch.ones((), dtype=h.dtype)
    t2 = t.clone()
    t2[-1] = ignore
    gh, gw = torch.ops.myns.fused_linear_cross_entropy_backward(one, h, w, t2, ignore, reduction)
    return loss, gh, gw


# (op, variant, dtypes, what must catch it): "bound" = an element outside its
# bound (or NaN where there should be none), "canary" = a write outside the
# arguments, "read-only" = an input changed.
VARIANTS = [
    ("rms_norm", rms_norm_drop_last, DTYPES, "bound"),
    ("softmax", softmax_drop_last, DTYPES, "bound"),
    ("silu_and_mul", silu_and_mul_drop_last, DTYPES, "bound"),
    ("rms_norm", rms_norm_ignores_eps, DTYPES, "bound"),
    ("fused_add_rms_norm", fused_add_rms_norm_ignores_eps, DTYPES, "bound"),
    ("rms_norm_backward", rms_norm_backward_ignores_eps, DTYPES, "bound"),
    ("matmul", matmul_tf32, [torch.float32], "bound"),
    ("bmm", matmul_tf32, [torch.float32], "bound"),
    ("matmul", matmul_drops_last_k, DTYPES, "bound"),
    ("bmm", matmul_drops_last_k, DTYPES, "bound"),
    ("rms_norm_backward", rms_norm_backward_zero_grad_weight, DTYPES, "bound"),
    ("rms_norm_backward", rms_norm_backward_zero_grad_x, DTYPES, "bound"),
    ("silu_and_mul_backward", silu_and_mul_backward_zeros, DTYPES, "bound"),
    ("softmax_backward", softmax_backward_zeros, DTYPES, "bound"),
    ("silu_and_mul", silu_and_mul_swapped, DTYPES, "bound"),
    ("softmax", softmax_max_skips_last, DTYPES, "bound"),
    ("softmax", softmax_max_skips_first, DTYPES, "bound"),
    ("scale_", scale__writes_past_the_end, DTYPES, "canary"),
    ("fused_add_rms_norm", fused_add_rms_norm_writes_past_the_end, DTYPES, "canary"),
    ("rms_norm", rms_norm_shifted_by_one, DTYPES, "bound"),
    ("add", add_writes_into_its_input, DTYPES, "read-only"),
    ("softmax", softmax_reads_past_the_end, DTYPES, "bound"),
    ("fused_linear_cross_entropy_train", flce_train_sum_for_mean, DTYPES, "bound"),
    ("fused_linear_cross_entropy_train", flce_train_drops_last_row, DTYPES, "bound"),
]
CATCHES = {"bound": "outside the bound", "canary": "wrote outside argument", "read-only": "changed its read-only argument"}


def rejected(fn, name, catcher):
    """Runs a check that must fail; returns its message."""
    with pytest.raises(AssertionError) as info:
        fn()
    msg = str(info.value)
    assert msg.startswith(name), f"rejected by another op's check: {msg}"
    assert CATCHES[catcher] in msg, f"expected the {catcher} check to catch it, got: {msg}"
    return msg


CASE_PARAMS = [
    pytest.param(name, fn, dt, catcher, id=f"{name}-{fn.__name__}-{str(dt).removeprefix('torch.')}")
    for name, fn, dts, catcher in VARIANTS
    for dt in dts
]


@pytest.mark.parametrize("name,fn,dtype,catcher", CASE_PARAMS)
def test_broken_variant_fails_the_op_case_check(name, fn, dtype, catcher):
    """On op_cases' own inputs (the ones the thread, CUDA-graph, bad-input
    and sanitizer checks use)."""
    torch.manual_seed(0)
    args = CASES[name].args(dtype, "cpu")
    check_op(name, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])  # the real op passes
    rejected(lambda: check_op(name, list(args), impl=fn), name, catcher)


# --- the cases the issue names, through the real tests' own check functions


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_wrong_last_element_of_long_rows(dtype):
    """(150, 40002): the old normwise bound passed 150 wrong elements in bf16."""
    torch.manual_seed(0)
    rejected(lambda: check_row_ops((150, 40002), dtype, "cpu", impls={"softmax": softmax_drop_last}), "softmax", "bound")


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_zero_weight_gradient_with_many_rows(dtype):
    """The old property bound scaled by the row count: with 20 or more
    rows a zero grad_weight passed in bfloat16."""
    for rows in (20, 64):
        x = make_tensor((rows, 16), dtype, "cpu", "contiguous", rows)
        w = make_tensor((16,), dtype, "cpu", "contiguous", 1)
        g = make_tensor((rows, 16), dtype, "cpu", "transposed", 2)
        check_rms_norm_and_backward(x, w, 1e-6, g)
        rejected(lambda: check_rms_norm_and_backward(x, w, 1e-6, g, impl_backward=rms_norm_backward_zero_grad_weight),
                 "rms_norm_backward", "bound")


@pytest.mark.parametrize("dtype", HALF + [torch.float32], ids=str)
def test_matmul_dropped_k_term(dtype):
    """The old TOL * k bound was about 50x the expected error."""
    for m, k, n in [(16, 40, 16), (8, 40, 33), (33, 17, 40)]:
        a = make_tensor((m, k), dtype, "cpu", "offset", k)
        b = make_tensor((k, n), dtype, "cpu", "transposed", n)
        check_matmul(a, b)
        rejected(lambda: check_matmul(a, b, impl=matmul_drops_last_k), "matmul", "bound")


def test_tf32_fails_the_float32_check():
    """test_ops' large odd product (K = 1031) and op_cases' tiny one."""
    torch.manual_seed(0)
    a, b = torch.randn(257, 1031), torch.randn(1031, 129)
    check_op("matmul", [a, b])
    rejected(lambda: check_op("matmul", [a, b], impl=matmul_tf32), "matmul", "bound")
    assert (_tf32(a) - a).abs().max() <= U_TF32 * a.abs().max()  # the stand-in rounds as TF32 does


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 8), (3, 5, 6), (7, 130), (2, 3, 1024)], ids=str)
def test_rms_norm_ignoring_eps(shape, dtype):
    """test_llm_ops' shapes and inputs: the old float32 bound (2e-6) passed
    a kernel that ignores eps = 1e-6. A one-row input has no small row: the
    single row is scaled down to be one."""
    torch.manual_seed(0)
    x = norm_input(shape, dtype, "cpu", 1e-3 if shape[0] == 1 else 1.0)
    w = torch.randn(shape[-1], dtype=dtype)
    check_op("rms_norm", [x, w, EPS])
    rejected(lambda: check_op("rms_norm", [x, w, EPS], impl=rms_norm_ignores_eps), "rms_norm", "bound")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_off_by_one_max_needs_the_big_row(dtype):
    """The inputs must contain a row whose maximum is last and large enough
    to overflow exp without it: check that softmax_input has one."""
    x = softmax_input((6, 16), -1, dtype, "cpu")
    rest = x[-1, :-1].max().double()
    assert x[-1].argmax() == 15 and x[-1, -1].double() - rest > {torch.float64: 709.8}.get(dtype, 88.8)
    rejected(lambda: check_op("softmax", [x, -1], impl=softmax_max_skips_last), "softmax", "bound")
