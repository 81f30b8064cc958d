"""Elementwise error bounds for every myns op, from first principles.

Every correctness check in the Python tests and benchmarks compares each
output element with a float64 reference computed from the same inputs and
asks ``|out - ref| <= bound`` for that element. No normwise error, no
``max(|ref|, 1)`` scale, no factor of the row count: a wrong element fails
even when the rest of the tensor is right.

Notation (per op dtype):

* ``u_out``: unit roundoff of the output dtype (half the spacing of numbers
  near 1): float64 2^-53, float32 2^-24, float16 2^-11, bfloat16 2^-8. One
  correctly rounded result is within ``u_out * |ref|``.
* ``u_acc``: unit roundoff of the type the op computes in: float64 for
  float64, float32 for everything else (half types are widened first).
* ``LAMBDA * sqrt(n) * u_acc``: the relative error of a sum of ``n`` terms
  (measured against the sum of their magnitudes). The worst case is
  ``(n - 1) u``; rounding errors of independent operations behave like
  random variables, and Higham & Mary ("A new approach to probabilistic
  rounding error analysis", 2019) bound the error by ``lambda sqrt(n) u``
  with a failure probability below ``2 exp(-lambda^2 / 2)`` per partial sum.
  Tree, blocked and split-K sums do better still.
* ``floor``: an absolute term for results that underflow: the smallest
  normal float32 (GPU kernels may flush float32 subnormals to zero) or one
  float16 subnormal step.
* The reference is float64 and has rounding errors of its own; every term
  uses ``u + 2^-53`` so float64 checks allow for both sides.

Inputs are exact (they are the op's own inputs, widened), so errors come
only from the op's arithmetic. Where an op amplifies an intermediate
rounding (exp turns an absolute error ``u |x|`` of its argument into a
relative error of the same size; cancellation in a difference), the bound
carries that conditioning as a magnitude term, derived per op below.

The bounds must hold for every correct kernel (CPU, every CUDA path) and
fail for a wrong one: tests/python/test_checks_bite.py runs deliberately
broken implementations against these same functions and expects each to
be rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

F64, F32, F16, BF16 = torch.float64, torch.float32, torch.float16, torch.bfloat16
U64 = 2.0**-53
U = {F64: U64, F32: 2.0**-24, F16: 2.0**-11, BF16: 2.0**-8}
# TF32 keeps 10 mantissa bits; myns rounds operands to nearest (a kernel that
# truncates would need twice this).
U_TF32 = 2.0**-11
FLOOR = {F64: 2.0**-1022, F32: 2.0**-126, F16: 2.0**-24, BF16: 2.0**-126}
# Multiplier of sqrt(n) u for sums (see the module docstring). 4 keeps the
# chance of a false failure negligible (the bound is 3 lambda standard
# deviations above even a sum of same-signed terms) while a missing or
# doubled term of a typical size is still far outside it.
LAMBDA = 4.0
# exp(-a) overflows the accumulation type past this |a|: silu(a) then comes
# out as 0 (a correct rounding of a*sigmoid(a) would be ~1e-37).
EXP_OVERFLOW = {F64: 700.0, F32: 80.0}


def u_out(dtype: torch.dtype) -> float:
    """Unit roundoff of the output plus that of the float64 reference."""
    return U[dtype] + U64


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    return F64 if dtype == F64 else F32


def u_acc(dtype: torch.dtype) -> float:
    """Unit roundoff of the accumulation type plus the reference's."""
    return U[acc_dtype(dtype)] + U64


def floor(dtype: torch.dtype) -> float:
    return FLOOR[dtype]


def _sum_term(n: int) -> float:
    """Relative error (in units of u_acc) of a sum of n terms."""
    return LAMBDA * math.sqrt(max(n, 1))


def _d(t: torch.Tensor) -> torch.Tensor:
    return t.detach().double()


def _finite_or_inf(b: torch.Tensor) -> torch.Tensor:
    # A NaN bound comes from non-finite inputs (0 * inf); those elements'
    # references are non-finite too and are compared structurally.
    return torch.nan_to_num(b, nan=math.inf)


# ---------------------------------------------------------------- per op


def bound_add(a, b, refs):
    """``add(a, b)``: ``out = fl_out(fl_acc(a + b))``.

    Half types add in float32 (exact unless the exponents are more than 16
    bits apart: one rounding, ``u_acc``) and round once to the output
    (``u_out``); float32/float64 round once. Per element::

        |out - ref| <= (u_out + u_acc) |ref| + floor

    Integer tensors add exactly (wrapping as torch.add; the tests' values
    stay far from the limits): bound 0.
    """
    dt = a.dtype
    if not dt.is_floating_point:
        return (torch.zeros_like(_d(refs[0])),)
    return ((u_out(dt) + u_acc(dt)) * _d(refs[0]).abs() + floor(dt),)


def bound_scale(x, alpha, refs):
    """``scale(x, alpha)`` / ``scale_``: ``out = fl_out(x * fl_acc(alpha))``.

    ``alpha`` arrives as a double and is rounded to the accumulation type
    (``u_acc``), the product is rounded in it (``u_acc``) and then to the
    output (``u_out``)::

        |out - ref| <= (u_out + 2 u_acc) |ref| + floor
    """
    dt = x.dtype
    if not dt.is_floating_point:
        if isinstance(alpha, int):
            return (torch.zeros_like(_d(refs[0])),)  # integer times integer: exact
        dt = F32  # integer times float: float32, x exact in it for the tests' values
    return ((u_out(dt) + 2 * u_acc(dt)) * _d(refs[0]).abs() + floor(dt),)


def matmul_bound(a, b, ref, tf32: bool | None = None):
    """``matmul(a, b)`` / ``bmm``: ``c_ij = sum_k a_ik b_kj`` over ``k`` terms.

    Products of two half-type inputs are exact in float32 (11 + 11 bits);
    float32 and float64 products round once. The sum of ``k`` products is
    accumulated in float32 (float64 for float64) in some order (tiles, split-K
    partial sums, tensor-core trees): ``LAMBDA sqrt(k) u_acc`` relative to
    ``M_ij = sum_k |a_ik| |b_kj|`` (the magnitudes the rounding errors scale
    with, not ``|c_ij|``, which may cancel), plus a few roundings of the
    partial-sum reduction. With TF32 each operand is first rounded to 10
    mantissa bits (``u_tf32 = 2^-11``): every product is off by at most
    ``2 u_tf32 + u_tf32^2``. The result is rounded once to the output dtype.
    Products that underflow in float32 may be flushed: ``k floor``::

        |out - ref| <= u_out |ref| + ((LAMBDA sqrt(k) + 4) u_acc + tf32 (2 u_tf32 + u_tf32^2)) M
                       + k floor_acc + floor

    A float32 product computed in TF32 is off by about ``u_tf32 sqrt(k) rms``,
    some 2^13 / (LAMBDA sqrt(k)) times the float32 bound: it fails (see
    test_checks_bite.py). A dropped or doubled term ``a_ik b_kj`` is off by a
    typical product, far above ``sqrt(k) u M / k``-sized errors.
    """
    dt = a.dtype
    if tf32 is None:
        tf32 = dt == F32 and a.is_cuda and torch.backends.cuda.matmul.allow_tf32
    k = a.shape[-1]
    mag = _d(a).abs() @ _d(b).abs()
    coef = (_sum_term(k) + 4) * u_acc(dt) + (2 * U_TF32 + U_TF32**2 if tf32 else 0.0)
    return _finite_or_inf(u_out(dt) * _d(ref).abs() + coef * mag + k * FLOOR[acc_dtype(dt)] + floor(dt))


def bound_matmul(a, b, refs, tf32=None):
    return (matmul_bound(a, b, refs[0], tf32),)


def rms_rel(n: int, dtype: torch.dtype) -> float:
    """Relative error of one ``rms_norm`` output element (see bound_rms_norm)."""
    return u_out(dtype) + (LAMBDA / 2 * math.sqrt(max(n, 1)) + 8) * u_acc(dtype)


def bound_rms_norm(x, w, eps, refs):
    """``rms_norm(x, w, eps)``: ``out = x * r * w``, ``r = 1 / sqrt(mean(x^2) + eps)``.

    In the accumulation type: ``x^2`` is rounded once per term and the
    ``n``-term sum of non-negative squares has relative error at most
    ``LAMBDA sqrt(n) u_acc``; dividing by ``n`` and adding ``eps`` round once
    each; the square root halves the relative error of its argument and adds
    one rounding (``rsqrtf`` on the GPU: up to 2 ulp), the reciprocal one
    more. So ``r`` is within ``(LAMBDA sqrt(n) / 2 + 5) u_acc``. The output
    multiplies ``x * r * w`` (two roundings) and rounds once to its dtype.
    Every factor is relative, so the bound is relative to each element::

        |out - ref| <= (u_out + (LAMBDA sqrt(n) / 2 + 8) u_acc) |ref| + floor

    Ignoring ``eps`` changes ``r`` by a factor ``sqrt(1 + eps / mean(x^2))``:
    inputs include rows of magnitude 1e-3 (mean(x^2) ~ eps), where that is
    ~1.4, so the check catches it in every dtype.
    """
    n = x.shape[-1] if x.dim() else 1
    dt = x.dtype
    return (rms_rel(n, dt) * _d(refs[0]).abs() + floor(dt),)


def bound_rms_norm_backward(g, x, w, eps, refs):
    """``rms_norm_backward(g, x, w, eps)`` -> ``(grad_x, grad_w)``.

    With ``r`` as in rms_norm, ``xh = x r`` and ``c = mean_k(g_k w_k xh_k)``::

        grad_x_j = r (g_j w_j - xh_j c),     grad_w_j = sum over rows of g_j xh_j

    ``grad_x`` is a difference that can cancel, so its error is measured
    against the magnitudes of its two terms, ``T_j = r |g_j w_j| + r |xh_j|
    mean_k |g_k w_k xh_k|``: ``r`` carries ``(LAMBDA sqrt(n) / 2 + 5) u_acc``
    and enters the second term cubed; ``c`` is an ``n``-term sum
    (``LAMBDA sqrt(n) u_acc``) of products with three roundings::

        |gx - ref| <= u_out |ref| + (2.5 LAMBDA sqrt(n) + 20) u_acc T + floor

    ``grad_w`` sums ``R`` rows (per-block partial sums in float32, then a
    sum of the partials): relative to ``S_j = sum_rows |g_j xh_j|``, each
    term is off by the error of ``r`` plus two roundings, the sum by
    ``LAMBDA sqrt(R) u_acc``::

        |gw - ref| <= u_out |ref| + (LAMBDA (sqrt(n) / 2 + sqrt(R)) + 8) u_acc S + floor

    No factor of ``R`` multiplies ``|ref|``: a zero gradient is off by
    ``|ref|``, about ``sqrt(R)`` times more than the bound allows.
    """
    n = x.shape[-1] if x.dim() else 1
    rows = x.numel() // max(n, 1)
    dt = x.dtype
    gd, xd, wd = _d(g), _d(x), _d(w)
    r = torch.rsqrt(xd.square().mean(-1, keepdim=True) + eps)
    xh = xd * r
    c_abs = (gd * wd * xh).abs().mean(-1, keepdim=True)
    t = r * (gd * wd).abs() + r * xh.abs() * c_abs
    gx, gw = _d(refs[0]), _d(refs[1])
    bgx = u_out(dt) * gx.abs() + (2.5 * _sum_term(n) + 20) * u_acc(dt) * t + floor(dt)
    s = (gd * xh).abs().reshape(-1, n).sum(0) if n else torch.zeros_like(gw)
    bgw = u_out(dt) * gw.abs() + (LAMBDA * (math.sqrt(n) / 2 + math.sqrt(max(rows, 1))) + 8) * u_acc(dt) * s + floor(dt)
    return _finite_or_inf(bgx), _finite_or_inf(bgw)


def bound_fused_add_rms_norm(x, residual, w, eps, refs):
    """``fused_add_rms_norm(x!, residual!, w, eps)``: ``residual += x`` (rounded
    to its dtype, the add's bound), then ``x = rms_norm(residual)`` (the rms
    bound; the reference normalises the rounded residual, as the op does)."""
    dt = x.dtype
    n = x.shape[-1] if x.dim() else 1
    bx = rms_rel(n, dt) * _d(refs[0]).abs() + floor(dt)
    br = (u_out(dt) + u_acc(dt)) * _d(refs[1]).abs() + floor(dt)
    return bx, br


def _exp_underflow(a: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    return a < -EXP_OVERFLOW[acc_dtype(dt)]


def bound_silu_and_mul(x, refs):
    """``silu_and_mul(x)``: ``out = a * sigmoid(a) * b``, ``[a, b] = x``.

    ``sigmoid(a) = 1 / (1 + exp(-a))``. The GPU's ``__expf`` computes
    ``2^(a log2 e)``: the rounding of ``a log2 e`` is an absolute error
    there and a relative error of ``|a| u`` in the result; CUDA documents
    ``2 + 1.173 |a|`` ulp in all, and an ulp is up to ``2 u`` relative, so
    ``(4 + 2.35 |a|) u``. ``1 + e`` (one rounding) and the fast reciprocal
    (2 ulp, ``4 u``) pass it on damped by ``e / (1 + e) <= 1``; two
    products and the output rounding follow. Per element::

        |out - ref| <= (u_out + (2.5 |a| + 12) u_acc) |ref| + floor

    For ``a`` below about -80 (float32) ``exp(-a)`` overflows and the result
    is flushed to 0 instead of ~1e-37: allowed there (``|ref|`` more).
    Swapping the halves gives ``silu(b) a``: no relation to the bound.
    """
    dt = x.dtype
    d = x.shape[-1] // 2
    a = _d(x[..., :d])
    ref = _d(refs[0]).abs()
    bound = (u_out(dt) + (2.5 * a.abs() + 12) * u_acc(dt)) * ref + floor(dt)
    return (_finite_or_inf(bound + torch.where(_exp_underflow(a, dt), ref, torch.zeros_like(ref))),)


def bound_silu_and_mul_backward(g, x, refs):
    """``silu_and_mul_backward(g, x)`` -> ``[grad_a, grad_b]``.

    ``grad_a = g b s (1 + a (1 - s))``, ``grad_b = g a s`` with ``s = sigmoid(a)``.
    ``s`` carries the exp and reciprocal errors of silu_and_mul,
    ``(2.35 |a| + 9) u_acc``; ``1 + a (1 - s)`` cancels near ``a = -1.28``,
    so grad_a's error is measured against ``T = |g b| s (1 + |a| (1 - s))``
    (``s`` enters twice there)::

        |grad_a - ref| <= u_out |ref| + (5 |a| + 24) u_acc T + floor
        |grad_b - ref| <= (u_out + (2.5 |a| + 12) u_acc) |ref| + floor

    (Flushed results where ``exp(-a)`` overflows are allowed, as in the forward.)
    """
    dt = x.dtype
    d = x.shape[-1] // 2
    a, b, gd = _d(x[..., :d]), _d(x[..., d:]), _d(g)
    s = torch.sigmoid(a)
    t = (gd * b).abs() * s * (1 + a.abs() * (1 - s))
    ref = _d(refs[0])
    ga, gb = ref[..., :d].abs(), ref[..., d:].abs()
    under = _exp_underflow(a, dt)
    ba = u_out(dt) * ga + (5 * a.abs() + 24) * u_acc(dt) * t + floor(dt) + torch.where(under, t, torch.zeros_like(t))
    bb = (u_out(dt) + (2.5 * a.abs() + 12) * u_acc(dt)) * gb + floor(dt) + torch.where(under, gb, torch.zeros_like(gb))
    return (_finite_or_inf(torch.cat([ba, bb], -1)),)


def softmax_rel(x, dim: int, y) -> torch.Tensor:
    """Per-element relative error allowed for ``softmax(x, dim)`` (see bound_softmax)."""
    dt = x.dtype
    xd = _d(x).reshape(1) if x.dim() == 0 else _d(x).movedim(dim, -1)
    yd = _d(y).reshape(1) if y.dim() == 0 else _d(y).movedim(dim, -1)
    n = xd.shape[-1]
    m = xd.amax(-1, keepdim=True) if n else xd.sum(-1, keepdim=True)
    dist = m - xd  # >= 0; inf for -inf entries
    pos = yd > 0
    w = torch.where(pos, yd * dist, torch.zeros_like(yd)).sum(-1, keepdim=True)
    k = 12 + _sum_term(n) + 4 * math.log2(max(n, 2))
    rel = u_out(dt) + (k + 4 * dist + 4 * w) * u_acc(dt)
    rel = torch.where(pos, rel, torch.zeros_like(rel))
    return rel.reshape(()) if x.dim() == 0 else rel.movedim(-1, dim)


def bound_softmax(x, dim, refs):
    """``softmax(x, dim)``: ``y_j = exp(x_j - m) / sum_k exp(x_k - m)``, ``m = max x``.

    Per element, relative to ``y_j`` (outputs are at most 1, so an absolute
    bound would pass any small wrong probability):

    * ``x_j - m`` rounds once: an absolute error ``u |x_j - m|`` in the
      exponent is a relative error of that size in ``exp`` (the op's own
      conditioning); the GPU's ``__expf`` adds ``2 + 1.173 |x_j - m|`` ulp,
      an ulp being up to ``2 u``. Together ``(4 |x_j - m| + 4) u_acc``.
    * The sum of ``n`` positive terms: ``LAMBDA sqrt(n) u_acc`` for the
      additions, plus each term's own exp error weighted by its share,
      ``4 W u_acc`` with ``W = sum_k y_k (m - x_k)`` (at most ``log n``);
      an online softmax rescales partial sums by ``exp(m_old - m_new)``,
      whose argument errors add up to the same ``W`` term, and whose own
      ``4 u`` each come about ``log2 n`` times for random rows.
    * The division (a fast reciprocal, ``4 u``, and a product) and the
      output rounding.

    ::

        |out - ref| <= (u_out + (12 + LAMBDA sqrt(n) + 4 log2 n + 4 |x_j - m| + 4 W) u_acc) y_j + floor

    A dropped or wrong element (``y_j`` replaced by 0) is off by ``y_j``,
    which this relative bound rejects however small ``y_j`` is.
    """
    dt = x.dtype
    y = _d(refs[0])
    return (_finite_or_inf(softmax_rel(x, dim, refs[0]) * y.abs() + floor(dt)),)


def bound_softmax_backward(g, y, dim, refs):
    """``softmax_backward(g, y, dim)``: ``gx_j = y_j (g_j - sum_k g_k y_k)``.

    The difference cancels, so the error is measured against ``T_j = |y_j|
    (|g_j| + sum_k |g_k y_k|)``: an ``n``-term sum (``LAMBDA sqrt(n) u_acc``),
    a product, a difference, a product, and the output rounding::

        |gx - ref| <= u_out |ref| + (LAMBDA sqrt(n) + 8) u_acc T + floor
    """
    dt = y.dtype
    if y.dim() == 0:
        gd, yd = _d(g).reshape(1), _d(y).reshape(1)
    else:
        gd, yd = _d(g).movedim(dim, -1), _d(y).movedim(dim, -1)
    n = yd.shape[-1]
    t = yd.abs() * (gd.abs() + (gd * yd).abs().sum(-1, keepdim=True))
    t = t.reshape(()) if y.dim() == 0 else t.movedim(-1, dim)
    ref = _d(refs[0]).abs()
    return (_finite_or_inf(u_out(dt) * ref + (_sum_term(n) + 8) * u_acc(dt) * t + floor(dt)),)


def _ln_stats(x, eps):
    xd = _d(x)
    mean = xd.mean(-1, keepdim=True)
    rstd = torch.rsqrt((xd - mean).square().mean(-1, keepdim=True) + eps)
    return xd, mean, rstd


def bound_layer_norm(x, w, b, eps, refs):
    """``layer_norm(x, w, b, eps)``: ``out = (x - mu) r w + b``, ``mu`` the
    mean, ``r = 1 / sqrt(mean((x - mu)^2) + eps)``.

    ``mu`` is an ``n``-term sum: an absolute error of ``LAMBDA sqrt(n) u_acc
    mean|x|``, which ``x - mu`` (one more rounding, ``u_acc |x - mu|``) passes
    on: the op's own conditioning, large when the mean dwarfs the spread.
    The variance is a sum of squares (relative ``LAMBDA sqrt(n) u_acc``,
    first-order insensitive to the error of ``mu``), ``r`` then carries
    ``(LAMBDA sqrt(n) / 2 + 5) u_acc`` as in rms_norm; the products with
    ``w`` and the addition of ``b`` round once each, the output once more::

        |out - ref| <= u_out |ref| + r |w| (u_acc |x - mu| + LAMBDA sqrt(n) u_acc mean|x|)
                       + (LAMBDA sqrt(n) / 2 + 8) u_acc |xhat w| + 2 u_acc |b| + floor

    (``w`` and ``b`` absent: ones and zeros.) Ignoring ``eps`` is caught on
    the rows of magnitude 1e-3, as for rms_norm.
    """
    n = x.shape[-1] if x.dim() else 1
    dt = x.dtype
    xd, mean, rstd = _ln_stats(x, eps)
    wd = _d(w).abs() if w is not None else 1.0
    bd = _d(b).abs() if b is not None else 0.0
    ua = u_acc(dt)
    dev = (xd - mean).abs()
    bound = (u_out(dt) * _d(refs[0]).abs() + rstd * wd * (ua * dev + _sum_term(n) * ua * xd.abs().mean(-1, keepdim=True))
             + (_sum_term(n) / 2 + 8) * ua * dev * rstd * wd + 2 * ua * bd + floor(dt))
    return (_finite_or_inf(bound),)


def bound_layer_norm_backward(g, x, w, eps, refs):
    """``layer_norm_backward(g, x, w, eps)`` -> ``(grad_x, grad_w, grad_b)``.

    With ``xh = (x - mu) r`` and ``gw_ = g w``::

        grad_x = r (gw_ - mean(gw_) - xh mean(gw_ xh))

    a difference that can cancel: measured against ``T = r (|gw_| +
    mean|gw_| + |xh| mean|gw_ xh|)``. ``xh`` carries the forward's error
    (``(LAMBDA sqrt(n) + 8) u_acc`` relative, plus the mean's conditioning
    ``r LAMBDA sqrt(n) u_acc mean|x|`` absolute), the two means ``LAMBDA
    sqrt(n) u_acc`` each, ``r`` enters twice::

        |gx - ref| <= u_out |ref| + (3 LAMBDA sqrt(n) + 24) u_acc (T + r^2 mean|x| mean|gw_ xh| ...) + floor

    (the conditioning term: ``T`` gets ``r |gw_|`` replaced by the mean's
    error times ``r`` times ``mean|gw_|``). The parameter gradients are sums
    over the ``R`` rows, as rms_norm's ``grad_w``::

        |gw - ref| <= u_out |ref| + (LAMBDA (sqrt(n) + sqrt(R)) + 8) u_acc sum_rows |g xh| + floor
        |gb - ref| <= u_out |ref| + (LAMBDA sqrt(R) + 2) u_acc sum_rows |g| + floor
    """
    n = x.shape[-1] if x.dim() else 1
    rows = x.numel() // max(n, 1)
    dt = x.dtype
    ua = u_acc(dt)
    xd, mean, rstd = _ln_stats(x, eps)
    gd = _d(g)
    wd = _d(w) if w is not None else 1.0
    xh = (xd - mean) * rstd
    gw_ = gd * wd
    cond = rstd * xd.abs().mean(-1, keepdim=True)  # the mean's error, relative to the spread
    t = rstd * (gw_.abs() + gw_.abs().mean(-1, keepdim=True) + (xh.abs() + cond) * (gw_ * xh).abs().mean(-1, keepdim=True)
                + cond * gw_.abs().mean(-1, keepdim=True))
    gx, gw, gb = _d(refs[0]), _d(refs[1]), _d(refs[2])
    bgx = u_out(dt) * gx.abs() + (3 * _sum_term(n) + 24) * ua * t + floor(dt)
    sxh = (gd * (xh.abs() + cond)).abs().reshape(-1, n).sum(0) if n else torch.zeros_like(gw)
    sg = gd.abs().reshape(-1, n).sum(0) if n else torch.zeros_like(gb)
    bgw = u_out(dt) * gw.abs() + (LAMBDA * (math.sqrt(n) + math.sqrt(max(rows, 1))) + 8) * ua * sxh + floor(dt)
    bgb = u_out(dt) * gb.abs() + (LAMBDA * math.sqrt(max(rows, 1)) + 2) * ua * sg + floor(dt)
    return _finite_or_inf(bgx), _finite_or_inf(bgw), _finite_or_inf(bgb)


def bound_gelu_and_mul(x, approximate, refs):
    """``gelu_and_mul(x, approximate)``: ``out = gelu(a) b``, ``[a, b] = x``.

    ``gelu(a) = a Phi(a)`` with ``Phi(a) = (1 + erf(a / sqrt 2)) / 2``, or
    with ``tanh`` in place of ``erf`` (``approximate="tanh"``). ``erf`` and
    ``tanh`` are accurate to a few ulp, but ``1 + erf`` cancels for negative
    ``a``: an absolute error of ``~2 u_acc`` there, which ``a b / 2``
    carries into the output (the formula torch.nn.functional.gelu uses too).
    The rest is a few relative roundings. erf itself: CUDA's ``erff`` is
    within 2 ulp; aten's vectorised CPU ``erf`` within about 3e-7 absolute
    (5 ``u_acc``), so ``1 + erf`` is off by up to ``8 u_acc`` absolute::

        |out - ref| <= (u_out + 16 u_acc) |ref| + 4 u_acc |a b| + floor

    Swapping the halves gives ``gelu(b) a``; the wrong ``approximate``
    differs by up to ~5e-4 |b|, beyond the float32/float64 bound.
    """
    dt = x.dtype
    d = x.shape[-1] // 2
    a, b = _d(x[..., :d]), _d(x[..., d:])
    return (_finite_or_inf((u_out(dt) + 16 * u_acc(dt)) * _d(refs[0]).abs() + 4 * u_acc(dt) * (a * b).abs() + floor(dt)),)


def bound_gelu_and_mul_backward(g, x, approximate, refs):
    """``gelu_and_mul_backward(g, x, approximate)`` -> ``[grad_a, grad_b]``.

    ``grad_a = g b gelu'(a)``, ``gelu'(a) = Phi(a) + a phi(a)`` (a sum that
    cancels near ``a = -0.75``), ``grad_b = g gelu(a)``. Against ``T = |g b|
    (Phi(a) + |a| phi(a) + 1)`` (the ``1``: ``erf``'s absolute error, as in
    the forward)::

        |grad_a - ref| <= u_out |ref| + 24 u_acc T + floor
        |grad_b - ref| <= (u_out + 16 u_acc) |ref| + 4 u_acc |a g| + floor
    """
    dt = x.dtype
    d = x.shape[-1] // 2
    a, b, gd = _d(x[..., :d]), _d(x[..., d:]), _d(g)
    cdf = 0.5 * (1 + torch.erf(a / math.sqrt(2)))
    pdf = torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    t = (gd * b).abs() * (cdf + a.abs() * pdf + 1)
    ref = _d(refs[0])
    ba = u_out(dt) * ref[..., :d].abs() + 24 * u_acc(dt) * t + floor(dt)
    bb = (u_out(dt) + 16 * u_acc(dt)) * ref[..., d:].abs() + 4 * u_acc(dt) * (a * gd).abs() + floor(dt)
    return (_finite_or_inf(torch.cat([ba, bb], -1)),)


def bound_rope(q, k, cos, sin, refs):
    """``rope(q, k, cos, sin)``: ``out_j = x_j c_j - x_{j+h} s_j`` (first
    half), ``x_{j+h} c_{j+h} + x_j s_{j+h}`` (second half).

    Two products (each rounded in the accumulation type, exact for half
    inputs) and a sum that can cancel, then the output rounding: against
    ``T = |x_j c_j| + |x_{j'} s_j|``::

        |out - ref| <= u_out |ref| + 3 u_acc T + floor
    """
    dt = q.dtype
    c, s = _d(cos).unsqueeze(1), _d(sin).unsqueeze(1)

    def one(x, ref):
        xd = _d(x)
        h = xd.shape[-1] // 2
        swapped = torch.cat([xd[..., h:], xd[..., :h]], -1)
        t = (xd * c).abs() + (swapped * s).abs()
        return _finite_or_inf(u_out(dt) * _d(ref).abs() + 3 * u_acc(dt) * t + floor(dt))

    return one(q, refs[0]), one(k, refs[1])


def bound_add_rms_norm(x, residual, w, eps, refs):
    """``add_rms_norm(x, residual, w, eps)`` -> ``(rms_norm(s) w, s)`` with
    ``s = x + residual`` rounded to the dtype: the add's bound for ``s``,
    rms_norm's for the other (the reference normalises the rounded sum, as
    the op does)."""
    dt = x.dtype
    n = x.shape[-1] if x.dim() else 1
    by = rms_rel(n, dt) * _d(refs[0]).abs() + floor(dt)
    bs = (u_out(dt) + u_acc(dt)) * _d(refs[1]).abs() + floor(dt)
    return by, bs


def bound_add_rms_norm_backward(g, gs, s, w, eps, refs):
    """``add_rms_norm_backward(g, gs, s, w, eps)`` -> ``(grad_sum, grad_w)``:
    rms_norm_backward's bounds for ``(g, s, w)``, with ``gs`` added to the
    first before its rounding (one more ``u_acc |gs|``)."""
    dt = s.dtype
    bgx, bgw = bound_rms_norm_backward(g, s, w, eps, (refs[0] - (_d(gs) if gs is not None else 0), refs[1]))
    extra = u_acc(dt) * _d(gs).abs() if gs is not None else 0.0
    return _finite_or_inf(bgx + extra + u_out(dt) * _d(refs[0]).abs()), bgw


def _ce_terms(x, target, ignore):
    """Per row of float64 logits: softmax ``p``, ``W = sum_j p_j (m - x_j)``,
    ``|lse|``, ``|x_t|`` and the mask of counted rows."""
    xd = _d(x)
    keep = target != ignore
    p = torch.softmax(xd, -1)
    m = xd.max(-1, keepdim=True).values
    w = (p * (m - xd)).sum(-1)
    lse = torch.logsumexp(xd, -1)
    t = torch.where(keep, target, torch.zeros_like(target)).clamp(0, max(xd.shape[-1] - 1, 0))
    xt = xd.gather(-1, t[:, None])[:, 0] if xd.shape[-1] else torch.zeros_like(lse)
    return p, w, lse.abs(), xt.abs(), keep


def ce_row_bound(x, target, ignore, dt, logit_err=None):
    """Absolute error of one row's loss ``lse - x_t`` (see bound_cross_entropy)."""
    n = x.shape[-1]
    ua = u_acc(dt)
    _, w, lse, xt, keep = _ce_terms(x, target, ignore)
    b = (_sum_term(n) + 12 + 4 * math.log2(max(n, 2)) + 4 * w) * ua + 2 * ua * (lse + xt)
    if logit_err is not None:
        b = b + 2 * logit_err
    return torch.where(keep, b, torch.zeros_like(b))


def reduce_bound(rows_bound, rows_ref, keep, reduction, ref, dt):
    n = rows_bound.numel()
    ua = u_acc(dt)
    if reduction == "none":
        return u_out(dt) * _d(ref).abs() + rows_bound + floor(dt)
    total = rows_bound.sum() + _sum_term(n) * ua * _d(rows_ref).abs().sum()
    if reduction == "mean":
        total = total / max(int(keep.sum()), 1)
    return _finite_or_inf(u_out(dt) * _d(ref).abs() + total + ua * _d(ref).abs() + floor(dt))


def bound_cross_entropy(x, target, ignore, reduction, refs):
    """``cross_entropy(x, target, ignore, reduction)``: per row ``lse - x_t``
    in the accumulation type.

    ``lse = m + log(sum_j exp(x_j - m))``: the sum's relative error is
    softmax's (``LAMBDA sqrt(V)`` for the additions, the exp errors weighted
    by the probabilities, ``4 W``, and the online rescalings, ``4 log2 V``),
    which ``log`` turns into an absolute error of the same size; ``m + log``
    and ``- x_t`` round once each (``u_acc (|lse| + |x_t|)`` twice). So per
    counted row::

        |loss_r - ref_r| <= (LAMBDA sqrt(V) + 12 + 4 log2 V + 4 W) u_acc + 2 u_acc (|lse| + |x_t|)

    and 0 for ignored rows. ``"none"`` adds the output rounding; ``"sum"``
    adds the rows' bounds and an ``N``-term sum (``LAMBDA sqrt(N) u_acc``
    of ``sum |loss_r|``); ``"mean"`` divides that by the count. A loss that
    counts ignored rows or picks the wrong class is off by ``O(1)``.
    """
    dt = x.dtype
    rb = ce_row_bound(x, target, ignore, dt)
    keep = target != ignore
    rows = _ce_rows64(x, target, ignore)
    return (reduce_bound(rb, rows, keep, reduction, refs[0], dt),)


def _ce_rows64(x, target, ignore):
    xd = _d(x)
    keep = target != ignore
    t = torch.where(keep, target, torch.zeros_like(target)).clamp(0, max(xd.shape[-1] - 1, 0))
    rows = torch.logsumexp(xd, -1) - xd.gather(-1, t[:, None])[:, 0]
    return torch.where(keep, rows, torch.zeros_like(rows))


def _ce_scale(grad, target, ignore, reduction, n):
    g = _d(grad)
    keep = (target != ignore).double()
    if reduction == "mean":
        g = g / max(float(keep.sum()), 1.0)
    return g.expand(n) * keep


def bound_cross_entropy_backward(g, x, target, ignore, reduction, refs, dtype=None):
    """``cross_entropy_backward``: ``d_j = (p_j - [j = t]) s`` per row (``s``
    the row's gradient scale, 0 for ignored rows).

    ``p_j`` carries softmax's relative error (see bound_softmax); the
    subtraction of 1 at the target and the product with ``s`` round once
    each, and ``s`` itself (a division for "mean") once::

        |d - ref| <= u_out |ref| + |s| (p_j (12 + LAMBDA sqrt(V) + 4 log2 V + 4 |x_j - m| + 4 W) + 3 [j = t]) u_acc + floor

    ``dtype``: the dtype ``d`` is computed for when ``x`` is not in it (fused
    linear cross-entropy passes its float64 logits).
    """
    dt = dtype or x.dtype
    n, v = x.shape
    ua = u_acc(dt)
    p, w, _, _, _ = _ce_terms(x, target, ignore)
    xd = _d(x)
    m = xd.max(-1, keepdim=True).values
    s = _ce_scale(g, target, ignore, reduction, n)[:, None].abs()
    onehot = torch.zeros_like(p)
    keep = target != ignore
    t = torch.where(keep, target, torch.zeros_like(target)).clamp(0, max(v - 1, 0))
    if v:
        onehot.scatter_(1, t[:, None], 1.0)
    rel = 12 + _sum_term(v) + 4 * math.log2(max(v, 2)) + 4 * (m - xd) + 4 * w[:, None]
    b = u_out(dt) * _d(refs[0]).abs() + s * (p * rel + 3 * onehot) * ua + floor(dt)
    return (_finite_or_inf(b),)


def flce_chunk_rows(n, h, v):
    """The op's chunk size (src/ops/fused_linear_cross_entropy.rs chunk_rows)."""
    inc = -(-v // max(h, 1))
    c = max(-(-n // max(inc, 1)), 1)
    liger = 1 << (c - 1).bit_length()
    wide = 1
    while wide < 1024 and 2 * wide * max(v, 1) <= 1 << 25:
        wide *= 2
    return max(liger, min(wide, 1 << (max(n, 1) - 1).bit_length()))


def _logit_err(h, w, dt):
    """Per-element absolute error of the logits ``h @ w.T`` formed in the
    inputs' dtype: the matmul bound (TF32 as PyTorch's setting says)."""
    z = _d(h) @ _d(w).T
    return matmul_bound(h, w.T, z)


def bound_fused_linear_cross_entropy(h, w, target, ignore, reduction, refs):
    """``fused_linear_cross_entropy``: cross_entropy of the logits ``z = h
    w^T``, which the op forms in the inputs' dtype. An error ``E`` of the
    logits moves ``lse`` by at most ``max_j E_j`` and ``z_t`` by ``E_t``, so
    each row's bound gains ``2 max_j E_rj`` (matmul's bound for ``E``)."""
    dt = h.dtype
    e = _logit_err(h, w, dt)
    emax = e.max(-1).values if e.numel() else torch.zeros(h.shape[0], dtype=F64, device=h.device)
    z = _d(h) @ _d(w).T
    rb = ce_row_bound(z, target, ignore, dt, logit_err=emax)
    keep = target != ignore
    return (reduce_bound(rb, _ce_rows64(z, target, ignore), keep, reduction, refs[0], dt),)


def bound_fused_linear_cross_entropy_backward(g, h, w, target, ignore, reduction, refs):
    """``fused_linear_cross_entropy_backward`` -> ``(grad_h, grad_w)`` with
    ``d`` the logits' gradient (cross_entropy_backward of ``z = h w^T``):
    ``grad_h = d w``, ``grad_w = sum over chunks of d_c^T h_c``.

    ``d`` is off by cross_entropy_backward's bound plus the logits' error:
    ``E`` (matmul's bound, up to ``Emax`` per row) moves ``p_j`` by ``p_j
    2 Emax``, so ``|dd_j| <= D_j = b_ce_j + |s| (p_j + [j = t]) 2 Emax`` (the
    op rounds ``d`` to the inputs' dtype: ``u_out |d| + floor`` in ``b_ce``,
    taken for that dtype). Each
    product then adds matmul's own error, and the chunks' weight gradients,
    each rounded to the dtype, are summed (``LAMBDA sqrt(C) u_out`` of the
    magnitudes, and one ``floor`` per chunk where they are subnormal)::

        |grad_h - ref| <= u_out |ref| + (LAMBDA sqrt(V) + 4) u_acc |d| |w| + D |w| + floor
        |grad_w - ref| <= u_out |ref| + ((LAMBDA sqrt(N) + 4) u_acc + LAMBDA sqrt(C) u_out) |d|^T |h| + D^T |h| + C floor
    """
    dt = h.dtype
    n, hd = h.shape
    v = w.shape[0]
    z = _d(h) @ _d(w).T
    e = _logit_err(h, w, dt)
    emax = e.max(-1, keepdim=True).values if e.numel() else torch.zeros(n, 1, dtype=F64, device=h.device)
    p, _, _, _, keep = _ce_terms(z, target, ignore)
    s = _ce_scale(g, target, ignore, reduction, n)[:, None].abs()
    t = torch.where(keep, target, torch.zeros_like(target)).clamp(0, max(v - 1, 0))
    onehot = torch.zeros_like(p)
    if v:
        onehot.scatter_(1, t[:, None], 1.0)
    d = (p - onehot) * _ce_scale(g, target, ignore, reduction, n)[:, None]
    # d as the op forms it in the inputs' dtype: its own error and rounding
    # (u_out |d| + floor: a subnormal d rounds to a step whatever its size).
    (bce,) = bound_cross_entropy_backward(g, z, target, ignore, reduction, (d,), dtype=dt)
    big = s * (p + onehot) * 2 * emax
    dd = torch.nan_to_num(bce, posinf=0.0) + big
    wa, ha = _d(w).abs(), _d(h).abs()
    chunks = -(-n // flce_chunk_rows(n, hd, v)) if n else 1
    ua = u_acc(dt)
    bgh = u_out(dt) * _d(refs[0]).abs() + (_sum_term(v) + 4) * ua * (d.abs() @ wa) + dd @ wa + floor(dt)
    bgw = (u_out(dt) * _d(refs[1]).abs() + ((_sum_term(n) + 4) * ua + _sum_term(chunks) * u_out(dt)) * (d.abs().T @ ha)
           + dd.T @ ha + chunks * floor(dt))
    return _finite_or_inf(bgh), _finite_or_inf(bgw)


def bound_fused_linear_cross_entropy_train(h, w, target, ignore, reduction, refs):
    """``fused_linear_cross_entropy_train`` -> ``(loss, grad_h, grad_w)``: the
    loss as fused_linear_cross_entropy's, the gradients as its backward's at
    a loss gradient of 1 (reduction "none": empty, exact)."""
    (bl,) = bound_fused_linear_cross_entropy(h, w, target, ignore, reduction, refs[:1])
    if reduction == "none":
        return bl, torch.zeros_like(_d(refs[1])), torch.zeros_like(_d(refs[2]))
    one = torch.ones((), dtype=h.dtype, device=h.device)
    return (bl, *bound_fused_linear_cross_entropy_backward(one, h, w, target, ignore, reduction, refs[1:]))


# Op name -> bound(*args, refs) returning one bound tensor per output.
OP_BOUNDS = {
    "add": lambda a, b, refs: bound_add(a, b, refs),
    "matmul": bound_matmul,
    "bmm": bound_matmul,
    "rms_norm": bound_rms_norm,
    "rms_norm_backward": bound_rms_norm_backward,
    "fused_add_rms_norm": bound_fused_add_rms_norm,
    "silu_and_mul": bound_silu_and_mul,
    "silu_and_mul_backward": bound_silu_and_mul_backward,
    "silu_and_mul_backward_": lambda x, g, refs: bound_silu_and_mul_backward(g, x, refs),
    "softmax": bound_softmax,
    "softmax_backward": bound_softmax_backward,
    "scale": bound_scale,
    "scale_": bound_scale,
    "layer_norm": bound_layer_norm,
    "layer_norm_backward": bound_layer_norm_backward,
    "gelu_and_mul": bound_gelu_and_mul,
    "gelu_and_mul_backward": bound_gelu_and_mul_backward,
    "gelu_and_mul_backward_": lambda x, g, approximate, refs: bound_gelu_and_mul_backward(g, x, approximate, refs),
    "rope": bound_rope,
    "add_rms_norm": bound_add_rms_norm,
    "add_rms_norm_backward": bound_add_rms_norm_backward,
    "cross_entropy": bound_cross_entropy,
    "cross_entropy_backward": bound_cross_entropy_backward,
    "fused_linear_cross_entropy": bound_fused_linear_cross_entropy,
    "fused_linear_cross_entropy_backward": bound_fused_linear_cross_entropy_backward,
    "fused_linear_cross_entropy_train": bound_fused_linear_cross_entropy_train,
}


def op_bounds(name: str, args, refs, tf32: bool | None = None) -> tuple:
    """The elementwise bounds of op ``name`` on ``args`` (before the call)
    for its float64 references ``refs``. ``tf32``: whether a float32 product
    may use TF32 (default: as the args' device and PyTorch's setting say;
    pass it when the args are copies on another device)."""
    if tf32 is not None and name in ("matmul", "bmm"):
        return tuple(OP_BOUNDS[name](*args, refs, tf32=tf32))
    return tuple(OP_BOUNDS[name](*args, refs))


# ---------------------------------------------------------------- comparing


@dataclass
class Report:
    """Outcome of one elementwise comparison."""

    ok: bool
    message: str
    worst_ratio: float  # max |out - ref| / bound over finite reference elements


def compare(out: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor, dtype: torch.dtype, what: str = "") -> Report:
    """``out`` against the float64 ``ref`` element by element.

    NaN must be NaN where the reference is NaN and nowhere else; where the
    reference rounds to an infinity in ``dtype`` (including finite values
    beyond its range) the output must be that infinity; elsewhere
    ``|out - ref| <= bound``."""
    tag = f"{what}: " if what else ""
    if not isinstance(out, torch.Tensor):
        return Report(False, f"{tag}expected a tensor, got {type(out).__name__}", math.inf)
    if tuple(out.shape) != tuple(ref.shape):
        return Report(False, f"{tag}shape {tuple(out.shape)}, expected {tuple(ref.shape)}", math.inf)
    if out.dtype != dtype:
        return Report(False, f"{tag}dtype {out.dtype}, expected {dtype}", math.inf)
    if out.numel() == 0:
        return Report(True, "", 0.0)
    dev = ref.device
    o = out.detach().to(dev).double()
    r = ref.detach().double()
    bd = bound.to(dev).double().expand_as(r)
    err = (o - r).abs()
    within = err <= bd  # False wherever o or r is NaN or infinite
    if bool(within.all()):  # the common case: every element finite and inside
        return Report(True, "", (err / bd.clamp_min(1e-300)).max().item())
    r_nan = r.isnan()
    rd = r.to(dtype).double()  # overflow to inf as the output dtype would
    r_inf = rd.isinf() & ~r_nan
    fin = ~r_nan & ~r_inf
    bad = (o.isnan() != r_nan) | (r_inf & (o != rd)) | (fin & ~within)
    ratio = torch.where(fin & o.isfinite(), err / bd.clamp_min(1e-300), torch.zeros_like(err))
    worst = ratio.max().item() if ratio.numel() else 0.0
    nbad = int(bad.sum().item())
    if nbad == 0:
        return Report(True, "", worst)
    idx = tuple(int(i) for i in bad.nonzero()[0].tolist())
    # The worst offender among the finite ones, else the first bad element.
    if (fin & bad).any():
        masked = torch.where(fin & bad, torch.nan_to_num(ratio, nan=math.inf, posinf=math.inf), torch.full_like(ratio, -1.0))
        flat = int(masked.argmax().item())
        idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), r.shape)) if r.dim() else ()
    msg = (
        f"{tag}{nbad} of {r.numel()} elements outside the bound ({dtype}, shape {tuple(r.shape)}); "
        f"worst at {list(idx)}: got {o[idx].item():.9g}, expected {r[idx].item():.9g}, "
        f"|error| {err[idx].item():.3g} > bound {bd[idx].item():.3g}"
    )
    return Report(False, msg, worst)


def assert_within(out, ref, bound, dtype, what: str = "") -> float:
    """``compare`` that raises AssertionError; returns the worst error/bound ratio."""
    rep = compare(out, ref, bound, dtype, what)
    assert rep.ok, rep.message
    return rep.worst_ratio


def assert_same(a: torch.Tensor, b: torch.Tensor, what: str = "") -> None:
    """Two runs of the same kernels on the same values (compiled against
    eager, a wrapper against the op, a CUDA-graph replay against a direct
    call): nothing may differ, so the elementwise bound is zero (NaN where
    NaN, bit for bit elsewhere up to the sign of zero)."""
    tag = f"{what}: " if what else ""
    assert a.shape == b.shape and a.dtype == b.dtype, f"{tag}{a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"
    ad, bd = a.detach().cpu(), b.detach().cpu()
    same = (ad == bd) | (ad.isnan() & bd.isnan())
    if not bool(same.all()):
        i = tuple(int(v) for v in (~same).nonzero()[0].tolist())
        raise AssertionError(f"{tag}{int((~same).sum())} of {ad.numel()} elements differ; first at {list(i)}: {ad[i].item()!r} vs {bd[i].item()!r}")


def path_bound(mag: torch.Tensor, n: int, dtype: torch.dtype, roundings: int = 16) -> torch.Tensor:
    """Bound for a short chain of sums and products (a small model of
    matmul/add/scale/relu, or its gradient).

    Every result of such a chain is a sum over paths of products of inputs;
    each path's product carries at most ``roundings`` roundings and the sums
    at most ``LAMBDA sqrt(n)`` for the longest reduction ``n``, so relative to
    ``mag``, the same chain evaluated in float64 on the magnitudes of every
    input (``|x|``, ``|W|``, relu's mask taken from the computed values)::

        |out - ref| <= (u_out + (LAMBDA sqrt(n) + roundings) u_acc) mag + floor

    (relu moves an error of ``e`` by at most ``e``; where a value within
    its error of 0 is clipped on one side only, the difference is that
    value, inside the same bound).
    """
    return (u_out(dtype) + (_sum_term(n) + roundings) * u_acc(dtype)) * mag.double() + floor(dtype)
