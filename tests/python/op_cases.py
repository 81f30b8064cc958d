"""One entry per myns op: valid sample arguments and a float64 reference, so
generic tests (bad inputs, properties, threads) cover every op. A test fails
if an op is registered without an entry here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

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


def t(*shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device)


def _rms(x, w, eps):
    x, w = x.double(), w.double()
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * w


def _rms_backward(g, x, w, eps):
    x = x.double().requires_grad_()
    w = w.double().requires_grad_()
    gx, gw = torch.autograd.grad(_rms(x, w, eps), (x, w), g.double())
    return gx, gw


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


CASES: dict[str, Case] = {
    "add": Case(lambda dt, dev: (t(3, 4, dtype=dt, device=dev), t(3, 4, dtype=dt, device=dev)),
                lambda a, b: (a.double() + b.double(),)),
    "matmul": Case(lambda dt, dev: (t(3, 4, dtype=dt, device=dev), t(4, 5, dtype=dt, device=dev)),
                   lambda a, b: (a.double() @ b.double(),)),
    "bmm": Case(lambda dt, dev: (t(2, 3, 4, dtype=dt, device=dev), t(2, 4, 5, dtype=dt, device=dev)),
                lambda a, b: (a.double() @ b.double(),)),
    "rms_norm": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), t(8, dtype=dt, device=dev), EPS),
                     lambda x, w, eps: (_rms(x, w, eps),)),
    "rms_norm_backward": Case(
        lambda dt, dev: (t(3, 8, dtype=dt, device=dev), t(3, 8, dtype=dt, device=dev), t(8, dtype=dt, device=dev), EPS),
        _rms_backward),
    "fused_add_rms_norm": Case(
        lambda dt, dev: (t(3, 8, dtype=dt, device=dev), t(3, 8, dtype=dt, device=dev), t(8, dtype=dt, device=dev), EPS),
        _fused, mutates=(0, 1)),
    "silu_and_mul": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev),),
                         lambda x: (F.silu(x.double()[..., : x.shape[-1] // 2]) * x.double()[..., x.shape[-1] // 2:],)),
    "silu_and_mul_backward": Case(lambda dt, dev: (t(3, 4, dtype=dt, device=dev), t(3, 8, dtype=dt, device=dev)),
                                  _silu_backward),
    "softmax": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), -1),
                    lambda x, dim: (torch.softmax(x.double(), dim),)),
    "softmax_backward": Case(
        lambda dt, dev: (t(3, 8, dtype=dt, device=dev), torch.softmax(t(3, 8, dtype=torch.float64, device=dev), -1).to(dt), -1),
        _softmax_backward),
    "scale": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), 2.5), lambda x, a: (x.double() * a,)),
    "scale_": Case(lambda dt, dev: (t(3, 8, dtype=dt, device=dev), 2.5), lambda x, a: (x.double() * a,), mutates=(0,)),
}

TOL = {torch.float64: 1e-9, torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def call(name, args):
    """Runs op `name`; returns its results as a tuple (mutated args for in-place ops)."""
    case = CASES[name]
    out = getattr(torch.ops.myns, name)(*args)
    if case.mutates:
        return tuple(args[i] for i in case.mutates)
    return out if isinstance(out, tuple) else (out,)


def reference(name, args):
    return tuple(CASES[name].ref(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args]))


def matches(out, ref, dtype) -> bool:
    if len(out) != len(ref):
        return False
    for o, r in zip(out, ref):
        if o.shape != r.shape:
            return False
        o = o.double().cpu()
        r = r.double().cpu()
        if not torch.equal(o.isnan(), r.isnan()):
            return False
        ok = ~r.isnan()
        o, r = o[ok], r[ok]
        if not torch.equal(o.isinf(), r.isinf()) or not torch.equal(o[o.isinf()], r[r.isinf()]):
            return False
        fin = ~r.isinf()
        scale = r[fin].abs().max().item() if fin.any() else 1.0
        if fin.any() and (o[fin] - r[fin]).abs().max().item() > TOL.get(dtype, 0.0) * max(scale, 1.0):
            return False
    return True
