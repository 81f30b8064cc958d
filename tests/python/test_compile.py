"""torch.compile (static and dynamic shapes), graph breaks, and the bare
`torch.ops.load_library` case in a fresh process."""

import subprocess
import sys
import textwrap

import pytest
import torch
import torch._dynamo.testing

import myns


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


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_model_matches_eager(dynamic, device):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = TinyMLP().to(device)
    compiled = torch.compile(model, fullgraph=True, dynamic=dynamic)
    for batch in [5, 9, 17]:
        x = torch.randn(batch, 8, device=device)
        torch.testing.assert_close(compiled(x), model(x))
        for g_c, g_e in zip(grads(compiled, x), grads(model, x)):
            torch.testing.assert_close(g_c, g_e)


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
        torch.testing.assert_close(f(a, b), 2 * (a @ b))
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
    a = torch.randn(4, 3, device=dev, requires_grad=True)
    b = torch.randn(3, 5, device=dev, requires_grad=True)
    out = torch.ops.myns.add(torch.ops.myns.matmul(a, b), torch.ops.myns.matmul(a, b))
    torch.testing.assert_close(out, 2 * (a @ b))
    out.sum().backward()
    torch.testing.assert_close(a.grad, 2 * torch.ones(4, 5, device=dev) @ b.t())
    f = torch.compile(lambda x, y: torch.ops.myns.matmul(x, y), fullgraph=True, dynamic=True)
    torch.testing.assert_close(f(a.detach(), b.detach()), a.detach() @ b.detach())
    assert "myns" not in sys.modules
    print("bare ok")
    """
)


def test_bare_load_library_in_fresh_process(device):
    r = subprocess.run(
        [sys.executable, "-c", BARE, myns.library_path(), device], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert "bare ok" in r.stdout
