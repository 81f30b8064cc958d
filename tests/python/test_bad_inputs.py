"""The bad-input matrix: every op x every argument x every kind of bad or odd
input. Each case either computes the right answer (every element within
the op's bound of a float64 reference on the same inputs,
tests/python/bounds.py) or raises an error that names the op, of the
class PyTorch raises for the same problem (`expected_class`); either way
the process carries on and a valid call afterwards works. The run prints
how many cases were tried and how they ended."""

from __future__ import annotations

import collections

import pytest
import torch

import myns
from conftest import DEVICES
from op_cases import CASES, call, expect, mismatch

OUTCOMES: collections.Counter = collections.Counter()


def test_every_op_has_a_case():
    missing = set(myns.op_names()) - set(CASES)
    assert not missing, f"add these ops to tests/python/op_cases.py: {missing}"


def other_device(device):
    if device == "cuda" and torch.cuda.device_count() > 1:
        return "cuda:1"
    return "cpu" if device == "cuda" else "meta"


def variants(arg: torch.Tensor, device: str):
    """(label, replacement) pairs for one tensor argument."""
    for dt in [torch.int32, torch.int64, torch.bool, torch.complex64, torch.float8_e4m3fn, torch.uint16]:
        try:
            yield f"dtype={dt}", arg.to(dt) if dt != torch.complex64 else torch.complex(arg.float(), arg.float())
        except (RuntimeError, TypeError):
            pass
    other = torch.float64 if arg.dtype != torch.float64 else torch.float32
    yield "mixed-dtype", arg.to(other)
    yield "mixed-device", arg.to(other_device(device))
    yield "rank+1", arg.unsqueeze(0)
    if arg.dim() > 1:
        yield "rank-1", arg.flatten()
    if arg.dim() >= 1:
        yield "shape-1", arg.narrow(-1, 0, max(arg.shape[-1] - 1, 0))
        yield "zero-size", arg.narrow(0, 0, 0)
    yield "0-d", arg.reshape(-1)[0].clone()
    if arg.dim() >= 2:
        yield "transposed", arg.transpose(-1, -2).contiguous().transpose(-1, -2)
    if arg.dim() >= 1 and arg.numel():
        yield "expanded", arg.narrow(0, 0, 1).expand_as(arg)
        yield "strided", torch.stack([arg, arg], -1)[..., 0]
        if not arg.is_floating_point():
            return  # NaN, inf and huge values are for float tensors
        with_nan = arg.clone(memory_format=torch.contiguous_format)
        with_nan.view(-1)[0] = float("nan")
        yield "nan", with_nan
        with_inf = arg.clone(memory_format=torch.contiguous_format)
        with_inf.view(-1)[-1] = float("inf")
        yield "inf", with_inf
        big = arg * 1e15 if arg.dtype in (torch.float32, torch.float64) else arg * 1e4
        yield "huge", big


def scalar_variants(value):
    if isinstance(value, float):
        yield from [("neg", -1.0), ("zero", 0.0), ("nan", float("nan")), ("inf", float("inf")), ("tiny", 1e-300)]
    elif isinstance(value, int):
        yield from [("dim=99", 99), ("dim=-99", -99), ("dim=0", 0)]
    elif isinstance(value, str):
        yield from [("str=bogus", "bogus"), ("str=empty", "")]


def cases(device):
    for name, case in sorted(CASES.items()):
        if name not in myns.op_names():
            continue
        base = case.args(torch.float32, device)
        for i, a in enumerate(base):
            vs = variants(a, device) if isinstance(a, torch.Tensor) else scalar_variants(a)
            for label, v in vs:
                yield pytest.param(name, i, label, v, id=f"{name}-arg{i}-{label}")


ERRORS = (RuntimeError, ValueError, IndexError, NotImplementedError, TypeError)


def expected_class(label, msg):
    """The exception class PyTorch raises for this kind of bad input."""
    if label.startswith("dtype="):
        if "has dtype" in msg and "but `" in msg:
            return RuntimeError  # a supported dtype that disagrees with another argument's
        return NotImplementedError  # a dtype without a kernel
    if label.startswith("dim=") or "outside [0, " in msg:
        return IndexError  # a dimension or class index out of range
    if label in ("neg", "nan", "inf") or label.startswith("str="):
        return ValueError  # a bad value (eps, an unknown mode)
    return RuntimeError  # shapes, dtypes or devices that disagree, overlapping in-place arguments


# (target, ignore_index, tensor whose shape gives V, its dim of V) by op.
CE_TARGETS = {
    "cross_entropy": (1, 2, 0, -1),
    "cross_entropy_backward": (2, 3, 1, -1),
    "fused_linear_cross_entropy": (2, 3, 1, 0),
    "fused_linear_cross_entropy_backward": (3, 4, 2, 0),
    "fused_linear_cross_entropy_train": (2, 3, 1, 0),
}


def target_out_of_range(name, args):
    if name not in CE_TARGETS:
        return False
    ti, ii, vi, vd = CE_TARGETS[name]
    t, ignore, src = args[ti], args[ii], args[vi]
    if not (isinstance(t, torch.Tensor) and isinstance(src, torch.Tensor) and isinstance(ignore, int)) or t.dim() == 0:
        return False
    if t.dtype not in (torch.int64, torch.int32) or src.dim() == 0:
        return False
    v = src.shape[vd]
    return bool(((t != ignore) & ((t < 0) | (t >= v))).any())


def run_case(name, i, label, value, device):
    torch.manual_seed(0)
    args = list(CASES[name].args(torch.float32, device))
    args[i] = value
    try:
        expected = expect(name, args)
        ref_error = None
    except Exception as e:  # the reference itself rejects these inputs
        expected, ref_error = None, e
    try:
        out = call(name, args)
    except ERRORS as e:
        msg = str(e)
        assert "Exception raised from" not in msg, msg
        # Our own checks name the op; PyTorch's in-place/aliasing rules name neither.
        assert f"myns::{name}" in msg or "in-place" in msg or "memory location" in msg, msg
        want = expected_class(label, msg)
        assert isinstance(e, want), f"raised {type(e).__name__}, expected {want.__name__}: {msg}"
        return f"error:{type(e).__name__}"
    if any(isinstance(o, torch.Tensor) and o.device.type == "meta" for o in out):
        return "meta"  # a meta-only call: shapes, no values to compare
    assert ref_error is None, f"computed a result where the reference fails ({ref_error})"
    if device == "cuda" and target_out_of_range(name, args):
        # Documented: on CUDA a class index outside [0, V) gives NaN (a
        # device-side assert would kill the CUDA context); CPU raises.
        assert any(torch.isnan(o).any() for o in out if isinstance(o, torch.Tensor)), "no NaN for a target out of range"
        return "nan"
    msg = mismatch(out, expected)
    assert msg is None, f"wrong answer: {msg}"
    return "ok"


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_matrix(device):
    # One test per device that walks every case (thousands of tiny calls),
    # so a failure lists every offending case at once.
    failures = []
    for p in cases(device):
        name, i, label, value = p.values
        try:
            outcome = run_case(name, i, label, value, device)
        except AssertionError as e:
            failures.append(f"{p.id}: {e}")
            outcome = "failed"
        OUTCOMES[(device, outcome)] += 1
        # The process is healthy: a valid call still works.
        good = list(CASES[name].args(torch.float32, device))
        expected = expect(name, good)
        msg = mismatch(call(name, good), expected)
        assert msg is None, f"{p.id}: valid call failed afterwards: {msg}"
    assert not failures, "\n".join(failures[:50]) + f"\n({len(failures)} failures)"
    torch.testing.assert_close(myns.add(torch.ones(2, device=device), torch.ones(2, device=device)), torch.full((2,), 2.0, device=device))


def test_tma_store_override_takes_off_only():
    """MYNS_MATMUL_TMA_STORE: `off` or the automatic choice; anything else
    (which would silently keep TMA stores) is an error naming the knob."""
    try:
        with pytest.raises(ValueError, match="MYNS_MATMUL_TMA_STORE takes `off` or `auto`, not `0`"):
            myns.set_override("MYNS_MATMUL_TMA_STORE", "0")
        with pytest.raises(ValueError, match="unknown override `MYNS_NOPE` .*MYNS_MATMUL_TMA_STORE"):
            myns.set_override("MYNS_NOPE", "off")
        myns.set_override("MYNS_MATMUL_TMA_STORE", "off")
    finally:
        myns.set_override("MYNS_MATMUL_TMA_STORE", None)
