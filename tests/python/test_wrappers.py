"""The package's fast wrappers (`myns.<op>`): each is the op's OpOverload
behind a subclass whose __call__ is the overload's C++ entry point. They
must behave exactly like `torch.ops.myns.<op>.default` everywhere torch
looks at them: eager, autograd, torch.compile, FX, __torch_function__,
dispatch modes, opcheck. Results: bit for bit against the overload (the
same kernel), element by element against float64 references
(tests/python/bounds.py)."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import myns
from bounds import assert_same, assert_within, matmul_bound, path_bound
from conftest import DEVICES


def test_is_the_overload_without_a_python_frame():
    for name in myns.op_names():
        w = getattr(myns, name)
        ov = getattr(torch.ops.myns, name).default
        assert isinstance(w, torch._ops.OpOverload)
        assert w._schema is ov._schema and w.name() == ov.name() == f"myns::{name}"
        assert w.__name__ == name and w.__module__ == "myns"
        call = inspect.getattr_static(type(w), "__call__")
        assert isinstance(call, staticmethod) and not inspect.isfunction(call.__func__)


def test_signature_and_kwargs():
    sig = inspect.signature(myns.rms_norm)
    assert list(sig.parameters) == ["x", "weight", "eps"]
    assert sig.parameters["eps"].annotation is float and sig.return_annotation is torch.Tensor
    x, w = torch.randn(3, 8), torch.randn(8)
    assert_same(myns.rms_norm(x, weight=w, eps=1e-6), torch.ops.myns.rms_norm(x, w, 1e-6), "kwargs")
    with pytest.raises(RuntimeError):
        myns.rms_norm(x, w)  # eps has no default


def test_autograd_and_no_grad(device):
    a = torch.randn(4, 3, device=device, requires_grad=True)
    b = torch.randn(3, 5, device=device)
    out = myns.matmul(a, b)
    assert out.grad_fn is not None
    out.sum().backward()
    ones = torch.ones(4, 5, device=device)
    ref = ones.double() @ b.t().double()
    assert_within(a.grad, ref, matmul_bound(ones, b.t(), ref), torch.float32, "grad a")
    with torch.no_grad():
        assert not myns.matmul(a, b).requires_grad
    with torch.inference_mode():
        assert myns.add(b, b).is_inference()


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph(device, dynamic):
    torch._dynamo.reset()

    def f(x, w):
        return myns.add(myns.matmul(x, w), myns.scale(myns.matmul(x, w), 2.0))

    x, w = torch.randn(5, 4, device=device), torch.randn(4, 3, device=device)
    # p + 2p for one product p (the doubling is exact): three times the
    # product's bound plus one rounding of the sum.
    p = x.double() @ w.double()
    bound = 3 * matmul_bound(x, w, p) + path_bound(3 * p.abs(), 1, torch.float32, 0)
    assert_within(torch.compile(f, fullgraph=True, dynamic=dynamic)(x, w), 3 * p, bound, torch.float32)
    assert torch._dynamo.explain(f)(x, w).graph_break_count == 0


def test_fx_records_the_canonical_overload():
    gm = torch.fx.symbolic_trace(lambda x, y: myns.add(x, y))
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [torch.ops.myns.add.default]


def test_torch_function_and_dispatch_mode_see_the_op():
    seen = []

    class Sub(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(("function", func))
            return super().__torch_function__(func, types, args, kwargs or {})

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(("dispatch", func))
            return func(*args, **(kwargs or {}))

    a = torch.randn(3).as_subclass(Sub)
    myns.add(a, a)
    assert ("function", torch.ops.myns.add.default) in seen
    with Mode():
        myns.add(torch.randn(3), torch.randn(3))
    assert ("dispatch", torch.ops.myns.add.default) in seen


def test_opcheck_on_wrappers():
    torch.library.opcheck(myns.add, (torch.randn(3), torch.randn(3)))
    torch.library.opcheck(myns.matmul, (torch.randn(3, 2, requires_grad=True), torch.randn(2, 4)))


@pytest.mark.parametrize("dev", DEVICES)
def test_forward_ad_still_rejected(dev):
    """Forward-mode AD is not implemented; the no-grad fast path must not
    silently drop tangents."""
    import torch.autograd.forward_ad as fwAD

    a, b = torch.randn(4, device=dev), torch.randn(4, device=dev)
    with fwAD.dual_level(), torch.no_grad():
        x = fwAD.make_dual(a, torch.randn(4, device=dev))
        with pytest.raises(RuntimeError, match="jvp"):
            myns.add(x, b)
