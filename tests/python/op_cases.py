"""One entry per myns op: valid sample arguments, a float64 reference and
the op's elementwise error bound (tests/python/bounds.py), so generic tests
(bad inputs, properties, threads, CUDA graphs, the sanitizer workload) and
the broken-variant tests (test_checks_bite.py) share the same inputs and
the same checks. A test fails if an op is registered without an entry here.

The check every test calls is ``check_op(name, args)``: it places each
tensor argument inside a larger buffer of NaN canaries (the gaps of a
strided layout included), computes the reference and the bounds from the
arguments before the call, calls the op (or a stand-in ``impl``), and then
requires every canary intact, every read-only argument bit-for-bit
unchanged and every output element within its bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from bounds import compare, op_bounds

EPS = 1e-6


@dataclass
class Case:
    # args(dtype, device) -> valid positional arguments
    args: Callable
    # ref(*args) -> expected results (tuple of tensors; for in-place ops the
    # mutated arguments after the call), computed in float64
    ref: Callable
    # positions of arguments the op writes in place
    mutates: tuple = ()


# ---------------------------------------------------------------- inputs


def t(*shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device)


# Row magnitudes, cycled over the rows of norm inputs: a row of 1e-3 has
# mean(x^2) ~ eps = 1e-6, so a kernel that ignores eps is off by ~1.4x there.
ROW_SCALES = (1.0, 1e-3, 10.0, 0.1, 3.0)
# Larger than any exp argument float32 or float64 can take: a softmax that
# takes its max over all but one element overflows on a row whose maximum
# is that element.
BIG = 1000.0


def norm_input(shape, dtype, device, scale=1.0):
    """Normal values, each row (last dimension) scaled by ROW_SCALES in turn."""
    shape = tuple(shape)
    x = torch.randn(shape, dtype=torch.float64, device=device) * scale
    if len(shape) >= 1 and x.numel():
        rows = x.reshape(-1, shape[-1])
        s = torch.tensor(ROW_SCALES, dtype=torch.float64, device=device)
        rows *= s.repeat(rows.shape[0] // len(ROW_SCALES) + 1)[: rows.shape[0], None]
    return x.to(dtype)


def softmax_input(shape, dim, dtype, device, scale=4.0):
    """Normal values times ``scale``; with three or more rows along ``dim``,
    the last row's maximum is its last element and the one before's its
    first, each BIG above the rest (an off-by-one max overflows exp there)."""
    shape = tuple(shape)
    x = torch.randn(shape, dtype=torch.float64, device=device) * scale
    if len(shape) >= 1 and x.numel():
        rows = x.movedim(dim, -1).reshape(-1, shape[dim])
        if rows.shape[0] >= 3 and rows.shape[1] >= 2:
            rows[-1, -1] = BIG
            rows[-2, 0] = BIG
        x = rows.reshape(x.movedim(dim, -1).shape).movedim(-1, dim).contiguous()
    return x.to(dtype)


def _rms(x, w, eps):
    x, w = x.double(), w.double()
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * w


def _rms_backward(g, x, w, eps):
    x = x.double().requires_grad_()
    w = w.double().requires_grad_()
    gx, gw = torch.autograd.grad(_rms(x, w, eps), (x, w), g.double())
    return gx, gw


def _silu(x):
    x = x.double()
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def _silu_backward(g, x):
    x = x.double().requires_grad_()
    d = x.shape[-1] // 2
    (gx,) = torch.autograd.grad(F.silu(x[..., :d]) * x[..., d:], x, g.double())
    return (gx,)


def _softmax_backward(g, y, dim):
    g, y = g.double(), y.double()
    return (y * (g - (g * y).sum(dim, keepdim=True)),)


def _fused(x, r, w, eps):
    r2 = (r.double() + x.double()).to(r.dtype)  # residual is stored in its dtype
    return _rms(r2, w, eps), r2.double()


def _softmax_args(dt, dev):
    return (softmax_input((6, 16), -1, dt, dev), -1)


def _softmax_backward_args(dt, dev):
    y = torch.softmax(softmax_input((6, 16), -1, torch.float64, dev), -1).to(dt)
    return (t(6, 16, dtype=dt, device=dev), y, -1)


def _layer_norm(x, w, b, eps):
    return (F.layer_norm(x.double(), x.shape[-1:], None if w is None else w.double(), None if b is None else b.double(), eps),)


def _layer_norm_backward(g, x, w, eps):
    """The gradient in float64, written as the op computes it (non-finite
    inputs then give the same pattern of NaN and infinities; autograd of
    F.layer_norm gives the same finite values): gx = r (gw - mean(gw) -
    xh mean(gw xh)), grad_w = sum over rows of g xh, grad_b = sum of g."""
    x, g = x.double(), g.double()
    n = x.shape[-1]
    mean = x.mean(-1, keepdim=True)
    r = torch.rsqrt((x - mean).square().mean(-1, keepdim=True) + eps)
    xh = (x - mean) * r
    gw = g * (w.double() if w is not None else 1.0)
    gx = r * (gw - gw.mean(-1, keepdim=True) - xh * (gw * xh).mean(-1, keepdim=True))
    return gx, (g * xh).reshape(-1, n).sum(0), g.reshape(-1, n).sum(0)


def _gelu(x, approximate):
    x = x.double()
    d = x.shape[-1] // 2
    return (F.gelu(x[..., :d], approximate=approximate) * x[..., d:],)


def _gelu_backward(g, x, approximate):
    x = x.double().requires_grad_()
    (gx,) = torch.autograd.grad(_gelu(x, approximate)[0], x, g.double())
    return (gx,)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def _rope(q, k, cos, sin):
    """transformers' apply_rotary_pos_emb, in float64."""
    c, s = cos.double().unsqueeze(1), sin.double().unsqueeze(1)
    return (q.double() * c + rotate_half(q.double()) * s, k.double() * c + rotate_half(k.double()) * s)


def rope_args(dt, dev, b=2, hq=3, hk=1, s=5, d=8):
    """q and k as transformers makes them (transposed views of [B, S, H, D])
    and cos/sin of real angles, [1, S, D] (broadcast over the batch)."""
    q = torch.randn(b, s, hq, d, dtype=dt, device=dev).transpose(1, 2)
    k = torch.randn(b, s, hk, d, dtype=dt, device=dev).transpose(1, 2)
    ang = torch.arange(s, dtype=torch.float64, device=dev)[:, None] * torch.rand(d // 2, dtype=torch.float64, device=dev)
    ang = torch.cat([ang, ang], -1)[None]
    return q, k, ang.cos().to(dt), ang.sin().to(dt)


def _add_rms_backward(g, gs, s, w, eps):
    gx, gw = _rms_backward(g, s, w, eps)
    return (gx + (gs.double() if gs is not None else 0.0), gw)


def _ce_loss(x, target, ignore, reduction):
    """Cross-entropy in float64 as the op defines it, ``logsumexp(x) - x_t``
    per counted row: F.cross_entropy's values for finite logits, and the
    limit (not F.cross_entropy's NaN) when a logit is infinite."""
    keep = target != ignore
    t = torch.where(keep, target, torch.zeros_like(target)).clamp(0, max(x.shape[-1] - 1, 0))
    rows = torch.logsumexp(x, -1) - x.gather(-1, t[:, None])[:, 0]
    rows = torch.where(keep, rows, torch.zeros_like(rows))
    if reduction == "none":
        return rows
    return rows.sum() if reduction == "sum" else rows.sum() / keep.sum()


def _ce(x, target, ignore, reduction):
    return (_ce_loss(x.double(), target, ignore, reduction),)


def _ce_backward(g, x, target, ignore, reduction):
    xd = x.double().requires_grad_()
    (gx,) = torch.autograd.grad(_ce_loss(xd, target, ignore, reduction), xd, g.double())
    return (gx,)


def _flce(h, w, target, ignore, reduction):
    return _ce(h.double() @ w.double().T, target, ignore, reduction)


def _flce_backward(g, h, w, target, ignore, reduction):
    hd, wd = h.double().requires_grad_(), w.double().requires_grad_()
    return torch.autograd.grad(_ce_loss(hd @ wd.T, target, ignore, reduction), (hd, wd), g.double())


def _flce_train(h, w, target, ignore, reduction):
    (loss,) = _flce(h, w, target, ignore, reduction)
    if reduction == "none":
        return loss, h.new_empty(0, h.shape[1]).double(), w.new_empty(0, w.shape[1]).double()
    return (loss, *_flce_backward(torch.ones((), dtype=h.dtype, device=h.device), h, w, target, ignore, reduction))


def ce_target(n, v, device, ignore=-100):
    """Class indices with every third row ignored."""
    t = torch.randint(0, v, (n,), device=device)
    t[::3] = ignore
    return t


CASES: dict[str, Case] = {
    "add": Case(lambda dt, dev: (t(3, 4, dtype=dt, device=dev), t(3, 4, dtype=dt, device=dev)),
                lambda a, b: (a.double() + b.double(),)),
    "matmul": Case(lambda dt, dev: (t(3, 4, dtype=dt, device=dev), t(4, 5, dtype=dt, device=dev)),
                   lambda a, b: (a.double() @ b.double(),)),
    "bmm": Case(lambda dt, dev: (t(2, 3, 4, dtype=dt, device=dev), t(2, 4, 5, dtype=dt, device=dev)),
                lambda a, b: (a.double() @ b.double(),)),
    "rms_norm": Case(lambda dt, dev: (norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), EPS),
                     lambda x, w, eps: (_rms(x, w, eps),)),
    "rms_norm_backward": Case(
        lambda dt, dev: (t(5, 16, dtype=dt, device=dev), norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), EPS),
        _rms_backward),
    "fused_add_rms_norm": Case(
        lambda dt, dev: (norm_input((5, 16), dt, dev), norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), EPS),
        _fused, mutates=(0, 1)),
    "silu_and_mul": Case(lambda dt, dev: (t(3, 16, dtype=dt, device=dev) * 3,), lambda x: (_silu(x),)),
    "silu_and_mul_backward": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), t(3, 16, dtype=dt, device=dev) * 3),
                                  _silu_backward),
    "silu_and_mul_backward_": Case(lambda dt, dev: (t(3, 16, dtype=dt, device=dev) * 3, t(3, 8, dtype=dt, device=dev)),
                                   lambda x, g: _silu_backward(g, x), mutates=(0,)),
    "softmax": Case(_softmax_args, lambda x, dim: (torch.softmax(x.double(), dim),)),
    "softmax_backward": Case(_softmax_backward_args, _softmax_backward),
    "scale": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), 2.5), lambda x, a: (x.double() * a,)),
    "scale_": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), 2.5), lambda x, a: (x.double() * a,), mutates=(0,)),
    "layer_norm": Case(lambda dt, dev: (norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), t(16, dtype=dt, device=dev), EPS),
                       _layer_norm),
    "layer_norm_backward": Case(
        lambda dt, dev: (t(5, 16, dtype=dt, device=dev), norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), EPS),
        _layer_norm_backward),
    "gelu_and_mul": Case(lambda dt, dev: (t(3, 16, dtype=dt, device=dev) * 3, "none"), _gelu),
    "gelu_and_mul_backward": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), t(3, 16, dtype=dt, device=dev) * 3, "tanh"),
                                  _gelu_backward),
    "gelu_and_mul_backward_": Case(
        lambda dt, dev: (t(3, 16, dtype=dt, device=dev) * 3, t(3, 8, dtype=dt, device=dev), "tanh"),
        lambda x, g, approximate: _gelu_backward(g, x, approximate), mutates=(0,)),
    "rope": Case(rope_args, _rope),
    "add_rms_norm": Case(
        lambda dt, dev: (norm_input((5, 16), dt, dev), norm_input((5, 16), dt, dev), t(16, dtype=dt, device=dev), EPS),
        lambda x, r, w, eps: (_rms((x.double() + r.double()).to(x.dtype), w, eps), (x.double() + r.double()).to(x.dtype).double())),
    "add_rms_norm_backward": Case(
        lambda dt, dev: (t(5, 16, dtype=dt, device=dev), t(5, 16, dtype=dt, device=dev), norm_input((5, 16), dt, dev),
                         t(16, dtype=dt, device=dev), EPS),
        _add_rms_backward),
    "cross_entropy": Case(lambda dt, dev: (t(7, 33, dtype=dt, device=dev) * 3, ce_target(7, 33, dev), -100, "mean"), _ce),
    "cross_entropy_backward": Case(
        lambda dt, dev: (torch.tensor(1.5, dtype=dt, device=dev), t(7, 33, dtype=dt, device=dev) * 3, ce_target(7, 33, dev), -100, "sum"),
        _ce_backward),
    "fused_linear_cross_entropy": Case(
        lambda dt, dev: (t(11, 8, dtype=dt, device=dev), t(40, 8, dtype=dt, device=dev), ce_target(11, 40, dev), -100, "mean"),
        _flce),
    "fused_linear_cross_entropy_backward": Case(
        lambda dt, dev: (torch.tensor(0.7, dtype=dt, device=dev), t(11, 8, dtype=dt, device=dev), t(40, 8, dtype=dt, device=dev),
                         ce_target(11, 40, dev), -100, "mean"),
        _flce_backward),
    "fused_linear_cross_entropy_train": Case(
        lambda dt, dev: (t(11, 8, dtype=dt, device=dev), t(40, 8, dtype=dt, device=dev), ce_target(11, 40, dev), -100, "mean"),
        _flce_train),
}


def call(name, args, impl=None):
    """Runs op `name` (or `impl`, a stand-in with the op's signature); returns
    its results as a tuple (the mutated arguments for in-place ops)."""
    case = CASES[name]
    fn = impl if impl is not None else getattr(torch.ops.myns, name)
    out = fn(*args)
    if case.mutates:
        return tuple(args[i] for i in case.mutates)
    return out if isinstance(out, tuple) else (out,)


def reference(name, args):
    return tuple(CASES[name].ref(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args]))


def op_dtype(args, name=None):
    """The dtype of the op's results: its first tensor argument's, except
    that an integer tensor scaled by a float gives float32 (as ``x * 2.5``)."""
    first = next(a.dtype for a in args if isinstance(a, torch.Tensor))
    if name in ("scale", "scale_") and not first.is_floating_point:
        return torch.result_type(args[0], args[1])
    return first


# ---------------------------------------------------------------- expectations


@dataclass
class Expected:
    """References and bounds of one call, taken before the call."""

    name: str
    dtype: torch.dtype
    refs: tuple
    bounds: tuple


def expect(name, args, ref_device=None) -> Expected:
    """References and bounds for op `name` on `args`; with `ref_device`,
    computed from copies there (the sanitizer workload keeps its CUDA work
    to the ops under test)."""
    if ref_device is None:
        refs = reference(name, args)
        return Expected(name, op_dtype(args, name), refs, op_bounds(name, args, refs))
    tf32 = any(isinstance(a, torch.Tensor) and a.is_cuda and a.dtype == torch.float32 for a in args) and \
        torch.backends.cuda.matmul.allow_tf32
    moved = [a.to(ref_device) if isinstance(a, torch.Tensor) else a for a in args]
    refs = reference(name, moved)
    return Expected(name, op_dtype(args, name), refs, op_bounds(name, moved, refs, tf32=tf32))


def mismatch(outs, expected: Expected) -> str | None:
    """None if every output is within its bound, else what is wrong."""
    if len(outs) != len(expected.refs):
        return f"{expected.name}: {len(outs)} results, expected {len(expected.refs)}"
    for i, (o, r, b) in enumerate(zip(outs, expected.refs, expected.bounds)):
        rep = compare(o, r, b, expected.dtype, f"{expected.name} result {i}")
        if not rep.ok:
            return rep.message
    return None


def matches(outs, expected: Expected) -> bool:
    return mismatch(outs, expected) is None


def assert_matches(outs, expected: Expected, what: str = "") -> None:
    msg = mismatch(outs, expected)
    assert msg is None, f"{what}: {msg}" if what else msg


# ---------------------------------------------------------------- guards

CANARY_PAD = 16


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}[t.element_size()])


class Guard:
    """A tensor argument living inside a larger buffer: CANARY_PAD NaN
    elements before and after it and NaN in the gaps of its layout. A write
    outside the argument's own elements changes a canary; a read of one
    poisons the result."""

    def __init__(self, t: torch.Tensor):
        sizes, strides = tuple(t.shape), t.stride()
        span = 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
        # The argument's address keeps its alignment (mod 64 elements): a
        # misaligned view still takes the kernels' unaligned path.
        self.start = CANARY_PAD + t.storage_offset() % 64
        # NaN for floats; for integer arguments (class indices) the most
        # negative value, which no kernel may read as an index either.
        fill = math.nan if t.is_floating_point() else torch.iinfo(t.dtype).min
        self.buf = torch.full((span + self.start + CANARY_PAD,), fill, dtype=t.dtype, device=t.device)
        self.view = self.buf.as_strided(sizes, strides, self.start)
        self.view.copy_(t)
        # Canary positions: the pads, plus the layout's gaps if it has any.
        self.gaps = span != t.numel()
        if self.gaps:
            self.canary = torch.ones(self.buf.shape, dtype=torch.bool, device=t.device)
            self.canary.as_strided(sizes, strides, self.start).fill_(False)
        self.span = span
        self.before = _bits(self.buf).clone()

    def intact(self) -> bool:
        now = _bits(self.buf)
        if self.gaps:
            return bool(torch.equal(now[self.canary], self.before[self.canary]))
        p, e = self.start, self.start + self.span
        return bool(torch.equal(now[:p], self.before[:p]) and torch.equal(now[e:], self.before[e:]))


def guardable(t) -> bool:
    """Tensors whose elements can be copied into a fresh buffer with the same
    strides: non-empty, no stride 0 or negative, no overlap, no autograd."""
    return (
        isinstance(t, torch.Tensor)
        and t.numel() > 0
        and t.dim() > 0
        and not t.requires_grad
        and all(s > 0 or n == 1 for n, s in zip(t.shape, t.stride()))
        and torch._debug_has_internal_overlap(t) == 0
        and t.device.type != "meta"
    )


def guard_args(args):
    """(args with each guardable tensor moved into a canary buffer, guards)."""
    guards = {}
    out = list(args)
    for i, a in enumerate(args):
        if guardable(a):
            guards[i] = Guard(a)
            out[i] = guards[i].view
    return out, guards


def check_op(name, args, impl=None, guard=True, what="", ref_device=None):
    """The check: op `name` (or the stand-in `impl`) on `args` must write no
    memory but its outputs and in-place arguments (canaries), leave read-only
    arguments bit-for-bit alone, and put every output element within its
    bound of the float64 reference (computed on `ref_device` if given).
    Raises AssertionError; returns the outputs (the mutated arguments for
    in-place ops)."""
    case = CASES[name]
    label = what or f"{name} {op_dtype(args)} {[tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]}"
    args, guards = guard_args(args) if guard else (list(args), {})
    expected = expect(name, args, ref_device)
    before = {i: _bits(a).clone() for i, a in enumerate(args)
              if isinstance(a, torch.Tensor) and i not in case.mutates and a.device.type != "meta"}
    outs = call(name, args, impl)
    for i, g in guards.items():
        assert g.intact(), f"{label}: wrote outside argument {i} (a canary next to it changed)"
    for i, b in before.items():
        assert torch.equal(_bits(args[i]), b), f"{label}: changed its read-only argument {i}"
    assert_matches(outs, expected, label)
    return outs
