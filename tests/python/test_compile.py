"""torch.compile (static and dynamic shapes), graph breaks, and the bare
`torch.ops.load_library` case in a fresh process. Results are checked
element by element (tests/python/bounds.py) against float64 references,
compiled and eager alike."""

import copy
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch._dynamo.testing

import myns
from bounds import assert_within, matmul_bound, path_bound

HERE = os.path.dirname(os.path.abspath(__file__))

class TinyMLP(torch.nn.Module):
    """Two layers built from myns ops (bias added with myns.add)."""

    def __init__(self, d_in=8, d_hidden=16, d_out=4):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(d_in, d_hidden) / d_in**0.5)
        self.b1 = torch.nn.Parameter(torch.zeros(d_hidden))
        self.w2 = torch.nn.Parameter(torch.randn(d_hidden, d_out) / d_hidden**0.5)

    def forward(self, x):
        h = torch.ops.myns.matmul(x, self.w1)
        h = torch.ops.myns.add(h, self.b1.expand_as(h))
        return torch.ops.myns.matmul(torch.relu(h), self.w2)


def grads(model, x):
    model.zero_grad()
    model(x).square().mean().backward()
    return [p.grad.clone() for p in model.parameters()]


def float64_copy(model):
    return copy.deepcopy(model).double()


def magnitudes(model, x):
    """TinyMLP and the gradients of its loss evaluated on magnitudes in
    float64 (|x|, |W|, |b|, relu's mask from the float64 h, and the loss
    gradient 2 mag(z) / N, which also covers the forward error reaching it):
    every term of each result, in absolute value, summed (bounds.path_bound's
    `mag`). Returns (mag of z, float64 z, mags of the gradients)."""
    d = lambda t: t.detach().double()  # noqa: E731
    h = d(x) @ d(model.w1) + d(model.b1)
    mask = (h > 0).double()
    xa = d(x).abs()
    w1, b1, w2 = (d(p).abs().requires_grad_() for p in (model.w1, model.b1, model.w2))
    za = ((xa @ w1 + b1) * mask) @ w2
    z = torch.relu(h) @ d(model.w2)
    gz = 2 * za.detach() / z.numel()
    gw1, gb1, gw2 = torch.autograd.grad(za, (w1, b1, w2), gz)
    return za.detach(), z, [gw1, gb1, gw2]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_model_matches_eager(dynamic, device):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = TinyMLP().to(device)
    compiled = torch.compile(model, fullgraph=True, dynamic=dynamic)
    for batch in [5, 9, 17]:
        x = torch.randn(batch, 8, device=device)
        mag, ref, gmag = magnitudes(model, x)
        n = max(batch, 16)  # the longest reduction: the batch (weight gradients) or the hidden width
        bound = path_bound(mag, n, torch.float32)
        assert_within(compiled(x), ref, bound, torch.float32, f"compiled, batch {batch}")
        assert_within(model(x), ref, bound, torch.float32, f"eager, batch {batch}")
        # Each gradient, compiled and eager, within its bound of the exact
        # one (a float64 copy of the model through the same ops): a failure
        # says which of the two is off (compiled against eager, as this test
        # did before, failed once on the H100 and could not tell).
        exact = grads(float64_copy(model), x.double())
        for name, g_c, g_e, g, m in zip(["w1", "b1", "w2"], grads(compiled, x), grads(model, x), exact, gmag):
            for which, got in (("compiled", g_c), ("eager", g_e)):
                assert_within(got, g, path_bound(m, n, torch.float32), torch.float32, f"{which} grad {name}, batch {batch}")


def test_no_graph_breaks(device):
    model = TinyMLP().to(device)
    x = torch.randn(5, 8, device=device)
    explanation = torch._dynamo.explain(model)(x)
    assert explanation.graph_break_count == 0
    assert explanation.graph_count == 1


def test_dynamic_shapes_do_not_recompile(device):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()

    @torch.compile(backend=counter, fullgraph=True, dynamic=True)
    def f(a, b):
        return torch.ops.myns.add(torch.ops.myns.matmul(a, b), torch.ops.myns.matmul(a, b))

    # (sizes 0 and 1 are always specialised by dynamo, so avoid them here)
    for m, k, n in [(3, 4, 5), (7, 2, 9), (11, 13, 6)]:
        a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
        # add(p, p) of one product p doubles it exactly: twice the product's bound.
        ref = 2 * (a.double() @ b.double())
        assert_within(f(a, b), ref, 2 * matmul_bound(a, b, ref / 2), torch.float32)
    assert counter.frame_count == 1


def test_training_steps_compiled(device):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = TinyMLP().to(device)
    step_model = torch.compile(model, fullgraph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 8, device=device)
    y = x[:, :4].sin()
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = (step_model(x) - y).square().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


BARE = textwrap.dedent(
    """
    import sys, torch
    torch.ops.load_library(sys.argv[1])
    dev = sys.argv[2]
    sys.path.insert(0, sys.argv[3])
    from bounds import assert_within, matmul_bound  # no myns import
    f32 = torch.float32
    a = torch.randn(4, 3, device=dev, requires_grad=True)
    b = torch.randn(3, 5, device=dev, requires_grad=True)
    out = torch.ops.myns.add(torch.ops.myns.matmul(a, b), torch.ops.myns.matmul(a, b))
    p = a.detach().double() @ b.detach().double()
    assert_within(out, 2 * p, 2 * matmul_bound(a, b, p), f32, "add of two products")
    out.sum().backward()
    ones = torch.ones(4, 5, device=dev)
    g = ones.double() @ b.detach().t().double()  # each product's gradient; the two are summed
    assert_within(a.grad, 2 * g, 2 * matmul_bound(ones, b.detach().t(), g), f32, "grad a")
    f = torch.compile(lambda x, y: torch.ops.myns.matmul(x, y), fullgraph=True, dynamic=True)
    assert_within(f(a.detach(), b.detach()), p, matmul_bound(a, b, p), f32, "compiled matmul")
    assert "myns" not in sys.modules
    print("bare ok")
    """
)


def test_bare_load_library_in_fresh_process(device):
    r = subprocess.run(
        [sys.executable, "-c", BARE, myns.library_path(), device, HERE], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert "bare ok" in r.stdout
