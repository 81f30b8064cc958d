"""The training-step ops: rope, layer_norm, gelu_and_mul, cross_entropy,
fused_linear_cross_entropy, add_rms_norm (and their backward ops), plus
integer add/scale: every element against a float64 reference within the
op's bound (op_cases.check_op), against PyTorch's and transformers' own
functions, opcheck, float64 gradcheck, torch.compile(fullgraph, dynamic),
autocast as aten's counterparts, errors of the right class."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch.library import opcheck

import myns
from bounds import assert_within, op_bounds, u_out
from conftest import DTYPES
from op_cases import CASES, _ce_loss, ce_target, check_op, norm_input, rope_args, rotate_half

# Backward builds (src/rowwise.rs plan_block_regs): rows of up to 512 packs
# (16 bytes, or elements when rows are not 16-byte multiples) at one pack per
# thread, up to 1024 at two, longer ones the general build: (2, 3000) takes
# one in bfloat16, two in float32, the general in float64; (3, 2050) the general.
# (2, 16384): backward the general build; forward the four-pack one (float32
# at 1024 threads a row, the 16-bit types at 512), the general in float64.
LN_SHAPES = [(1, 8), (3, 5, 6), (7, 130), (2, 3, 1024), (0, 16), (2, 3000), (3, 2050), (2, 16384)]


def rand(shape, dtype, device, scale=1.0):
    return (torch.randn(shape, dtype=torch.float64, device=device) * scale).to(dtype)


# --- values ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", LN_SHAPES, ids=str)
@pytest.mark.parametrize("params", ["wb", "w", "none"])
def test_layer_norm(shape, params, dtype, device):
    x = norm_input(shape, dtype, device)
    w = rand(shape[-1:], dtype, device) if "w" in params else None
    b = rand(shape[-1:], dtype, device) if "b" in params else None
    (out,) = check_op("layer_norm", [x, w, b, 1e-5])
    if x.numel() and dtype in (torch.float32, torch.float64):
        torch.testing.assert_close(out, F.layer_norm(x, shape[-1:], w, b, 1e-5))


# (600, 4096): more rows than blocks (264 on an H100 in float32 and bfloat16,
# 256 in float64), so a block sums several rows' partials.
@pytest.mark.parametrize("shape", LN_SHAPES + [(600, 4096)], ids=str)
def test_layer_norm_backward(shape, dtype, device):
    g, x, w = rand(shape, dtype, device), norm_input(shape, dtype, device), rand(shape[-1:], dtype, device)
    check_op("layer_norm_backward", [g, x, w, 1e-5])
    check_op("layer_norm_backward", [g, x, None, 1e-5])


# More rows than the backward kernels have blocks (src/rowwise.rs
# RowLaunch::block_regs), so a block reduces several rows: in the register
# builds each loaded while the one before is reduced (one pack per thread;
# rows of 1000, not covered exactly by the threads, and 2048); rows of 9000
# in the general build, its column sums in shared memory (up to two blocks
# an SM).
@pytest.mark.parametrize("shape", [(3001, 1000), (1200, 2048), (300, 9000)], ids=str)
def test_norm_backwards_over_many_rows(shape, dtype, device):
    g, gs, x, w = rand(shape, dtype, device), rand(shape, dtype, device), norm_input(shape, dtype, device), rand(shape[-1:], dtype, device)
    check_op("rms_norm_backward", [g, x, w, 1e-6])
    check_op("add_rms_norm_backward", [g, gs, x, w, 1e-6])
    check_op("layer_norm_backward", [g, x, w, 1e-5])
    check_op("layer_norm_backward", [g, x, None, 1e-5])


# At the edge of a block's shared memory (227 KB on the H100): layer_norm's
# float64 sums of rows of 14400 (225 KB, with its reductions' static shared
# memory under the limit) go through shared memory, of 14500 (227 KB) through
# global memory.
@pytest.mark.parametrize("h", [14400, 14500])
def test_layer_norm_backward_at_the_shared_memory_limit(h, device):
    shape = (3, h)
    g, x, w = rand(shape, torch.float64, device), norm_input(shape, torch.float64, device), rand(shape[-1:], torch.float64, device)
    check_op("layer_norm_backward", [g, x, w, 1e-5])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", [(1, 2), (3, 5, 6), (7, 130), (2, 3, 2048), (0, 16)], ids=str)
def test_gelu_and_mul(shape, approximate, dtype, device):
    x = rand(shape, dtype, device, 3.0)
    (out,) = check_op("gelu_and_mul", [x, approximate])
    g = rand(out.shape, dtype, device)
    check_op("gelu_and_mul_backward", [g, x, approximate])


def apply_rotary_pos_emb(q, k, cos, sin):
    """transformers' apply_rotary_pos_emb (Llama), or a copy of its formula
    where transformers is not installed."""
    try:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as hf
    except ImportError:
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s
    return hf(q, k, cos, sin)


# The CUDA kernel's blocks (src/ops/rope.rs) take heads in even groups of at
# most 256 / (threads per row) and, with few heads, several tokens each:
# (2, 3, 1, 5, 8) one block of 64 token slots for 10 tokens; (1, 290, 9, 3,
# 2) two groups, the last one short; (1, 600, 13, 2, 2) three. Rows of more
# than 256 packs take several blocks: (1, 2, 1, 3, 1030) on the strided path
# (515 pairs), (1, 1, 1, 2, 4112) on the 16-byte one.
@pytest.mark.parametrize("dims", [(2, 3, 1, 5, 8), (1, 32, 8, 17, 128), (3, 4, 4, 1, 64), (2, 2, 2, 3, 6), (2, 3, 2, 5, 8),
                                  (1, 290, 9, 3, 2), (1, 600, 13, 2, 2), (1, 2, 1, 3, 1030), (1, 1, 1, 2, 4112)], ids=str)
def test_rope(dims, dtype, device):
    b, hq, hk, s, d = dims
    q, k, cos, sin = rope_args(dtype, device, b, hq, hk, s, d)
    oq, ok = check_op("rope", [q, k, cos, sin])
    # Each output keeps its input's (HF's transposed) layout.
    assert oq.stride() == q.stride() and ok.stride() == k.stride()
    hq_, hk_ = apply_rotary_pos_emb(q.double(), k.double(), cos.double(), sin.double())
    if dtype in (torch.float32, torch.float64):
        torch.testing.assert_close(oq.double(), hq_, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(ok.double(), hk_, rtol=1e-5, atol=1e-5)
    # cos/sin with the batch dimension filled in, and contiguous q.
    check_op("rope", [q.contiguous(), k, cos.expand(b, s, d).contiguous(), sin.expand(b, s, d).contiguous()])


# On CUDA one block of up to 1024 threads finishes a "mean" or "sum" of up
# to FINISH_MAX_ROWS = 65536 rows (src/ops/cross_entropy.rs): (5000, 3) and
# (65536, 3) take several rows a thread; (70000, 3) aten's reductions.
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("nv", [(7, 33), (64, 1000), (3, 50257), (1, 1), (0, 5), (5000, 3), (65536, 3), (70000, 3)],
                         ids=str)
def test_cross_entropy(nv, reduction, dtype, device):
    n, v = nv
    if n > 1024 and device == "cpu":
        pytest.skip("the row counts of the CUDA finish; the CPU path is aten's at any count")
    x = rand(nv, dtype, device, 3.0)
    t = ce_target(n, v, device)
    (loss,) = check_op("cross_entropy", [x, t, -100, reduction])
    if n and dtype in (torch.float32, torch.float64):
        torch.testing.assert_close(loss, F.cross_entropy(x, t, ignore_index=-100, reduction=reduction), equal_nan=True)
    g = rand(loss.shape, dtype, device)
    check_op("cross_entropy_backward", [g, x, t, -100, reduction])


def test_cross_entropy_all_ignored_mean_is_nan(device):
    x = torch.randn(3, 4, device=device)
    t = torch.full((3,), -100, device=device)
    assert myns.cross_entropy(x, t).isnan().item() and F.cross_entropy(x, t).isnan().item()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("nhv", [(11, 8, 40), (37, 16, 300), (4, 64, 33), (1, 3, 2), (0, 4, 5)], ids=str)
def test_fused_linear_cross_entropy(nhv, reduction, dtype, device):
    n, h, v = nhv
    hid, w = rand((n, h), dtype, device), rand((v, h), dtype, device)
    t = ce_target(n, v, device)
    (loss,) = check_op("fused_linear_cross_entropy", [hid, w, t, -100, reduction])
    g = rand(loss.shape, dtype, device)
    check_op("fused_linear_cross_entropy_backward", [g, hid, w, t, -100, reduction])
    check_op("fused_linear_cross_entropy_train", [hid, w, t, -100, reduction])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.cuda
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("nhv", [(600, 8, 32769), (5000, 2, 3), (70000, 4, 3)], ids=str)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_fused_linear_cross_entropy_chunks(nhv, reduction, dtype):
    """Past the small cases' single chunk, on CUDA: (600, 8, 32769) in two
    chunks of 512 rows (src/ops/fused_linear_cross_entropy.rs chunk_rows)
    and (5000, 2, 3) in chunks of 4096, with one gradient scale for all rows
    ("mean", "sum"; for 5000 rows several rows a thread of the finishing
    kernel) or one per row ("none"); (70000, 4, 3), past FINISH_MAX_ROWS:
    aten's reductions and a scale per row."""
    n, h, v = nhv
    hid, w = rand((n, h), dtype, "cuda"), rand((v, h), dtype, "cuda")
    t = ce_target(n, v, "cuda")
    (loss,) = check_op("fused_linear_cross_entropy", [hid, w, t, -100, reduction])
    g = rand(loss.shape, dtype, "cuda")
    check_op("fused_linear_cross_entropy_backward", [g, hid, w, t, -100, reduction])
    check_op("fused_linear_cross_entropy_train", [hid, w, t, -100, reduction])


@pytest.mark.parametrize("frozen", [False, True], ids=["train", "frozen_weight"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_fused_linear_cross_entropy_autograd_within_bound(reduction, frozen, dtype, device):
    """Through autograd the op runs its training form (gradients at a loss
    gradient of 1, formed in the forward pass) and backward scales them by
    the loss gradient: one more rounding, ``u_out |ref|``, on the backward
    op's bound. A frozen weight takes the plain forward and backward instead."""
    n, h, v = 37, 16, 300
    hid, w = rand((n, h), dtype, device), rand((v, h), dtype, device)
    t = ce_target(n, v, device)
    g = torch.tensor(0.37, dtype=dtype, device=device)
    hr, wr = hid.clone().requires_grad_(), w.clone().requires_grad_(not frozen)
    myns.fused_linear_cross_entropy(hr, wr, t, -100, reduction).backward(g)
    refs = CASES["fused_linear_cross_entropy_backward"].ref(g, hid, w, t, -100, reduction)
    bounds = op_bounds("fused_linear_cross_entropy_backward", [g, hid, w, t, -100, reduction], refs)
    got = [hr.grad] + ([] if frozen else [wr.grad])
    for out, ref, b in zip(got, refs, bounds):
        assert_within(out, ref, b + u_out(dtype) * (ref.abs() + b), dtype, f"fused_linear_cross_entropy autograd {dtype}")


def test_add_rms_norm_keeps_only_what_backward_reads(device):
    """Autograd keeps the weight and the sum for backward, not x and residual
    (backward_reads): an attention or MLP output is freed after the norm."""
    o = dict(dtype=torch.float64, device=device)
    x, r = (torch.randn(4, 16, **o).requires_grad_() for _ in range(2))
    w = torch.randn(16, **o).requires_grad_()
    xs, rs = x * 1, r * 1
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y, s = myns.add_rms_norm(xs, rs, w, 1e-6)
    ptrs = {t.data_ptr() for t in packed}
    assert w.data_ptr() in ptrs and s.data_ptr() in ptrs
    assert xs.data_ptr() not in ptrs and rs.data_ptr() not in ptrs
    gy, gs = torch.randn_like(y), torch.randn_like(s)
    got = torch.autograd.grad((y, s), (x, r, w), (gy, gs))
    s64 = x + r
    ref = torch.autograd.grad((F.rms_norm(s64, (16,), w, 1e-6), s64), (x, r, w), (gy, gs))
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b)


GATED = {"silu": lambda h: myns.silu_and_mul(h), "gelu": lambda h: myns.gelu_and_mul(h, "tanh")}
GATED_REF = {"silu": lambda h: F.silu(h[..., :8]) * h[..., 8:],
             "gelu": lambda h: F.gelu(h[..., :8], approximate="tanh") * h[..., 8:]}


def _gated_step(op, device, keep, backward):
    """h = x @ w; y = gated(h); grads = backward(y, g, (x, w)). Returns the
    gradients, for each gradient that reached h's node whether it was in
    h's memory, and h's values before and after (h None when dropped)."""
    torch.manual_seed(0)
    o = dict(dtype=torch.float32, device=device)
    x, w = torch.randn(6, 5, **o, requires_grad=True), torch.randn(5, 16, **o, requires_grad=True)
    h = x @ w
    ptr, before = h.data_ptr(), h.detach().clone()
    y = GATED[op](h)
    seen = []
    y.grad_fn.next_functions[0][0].register_prehook(lambda grads: seen.append(grads[0].data_ptr()))
    if not keep:
        del h
        h = None
    grads = backward(y, torch.randn(6, 8, **o), (x, w))
    return grads, [p == ptr for p in seen], before, h


def _gated_reference(op, device):
    torch.manual_seed(0)  # the float32 step's values, then float64
    o = dict(dtype=torch.float32, device=device)
    x, w = (torch.randn(*s, **o).double().requires_grad_() for s in ((6, 5), (5, 16)))
    h = (x.float() @ w.float()).double()  # the float32 step's h
    g = torch.randn(6, 8, **o).double()
    return torch.autograd.grad(GATED_REF[op](h), (x, w), g)


@pytest.mark.parametrize("op", ["silu", "gelu"])
def test_gated_gradient_takes_the_input_memory_only_when_autograd_owns_it(op, device):
    """An MLP's gate/up output is held by autograd alone after the gated op:
    its gradient is then written over it (no second buffer of that size,
    as Liger-Kernel's SwiGLU). Never when anything else can still read it:
    a reference the caller keeps, retain_graph, create_graph."""
    ref = _gated_reference(op, device)

    def close(got, times=1):
        for a, b in zip(got, ref):
            torch.testing.assert_close(a.detach().double(), b * times, rtol=1e-4, atol=1e-4)

    grad = lambda y, g, xw: torch.autograd.grad(y, xw, g)  # noqa: E731
    # Autograd's alone: the gradient arrives in h's memory.
    got, same, _, _ = _gated_step(op, device, keep=False, backward=grad)
    assert same == [True]
    close(got)
    # The caller keeps h: h is untouched, the gradient is new memory.
    got, same, before, h = _gated_step(op, device, keep=True, backward=grad)
    assert same == [False] and torch.equal(h, before)
    close(got)

    # retain_graph: the second backward reads the saved h again; the last may reuse it.
    def twice(y, g, xw):
        first = torch.autograd.grad(y, xw, g, retain_graph=True)
        return [a + b for a, b in zip(first, torch.autograd.grad(y, xw, g))]
    got, same, _, _ = _gated_step(op, device, keep=False, backward=twice)
    assert same == [False, True]
    close(got, times=2)
    # create_graph: the gradient joins a graph; nothing is written over.
    got, same, _, _ = _gated_step(op, device, keep=False,
                                  backward=lambda y, g, xw: torch.autograd.grad(y, xw, g, create_graph=True))
    assert same == [False]
    close(got)


def _hf_rope(q, k, cos, sin):
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s


@pytest.mark.parametrize("trig_grad", [False, True])
@pytest.mark.parametrize("used", ["both", "q", "k"])
def test_rope_keeps_q_and_k_only_for_the_gradients_of_cos_and_sin(trig_grad, used, device):
    """A model's cos and sin are constants: autograd then keeps neither q nor
    k (backward_reads), only cos and sin; gradients as transformers' rope,
    also when one output is unused (its gradient is zeros of q's or k's size)."""
    leaves = [t.detach().requires_grad_(i < 2 or trig_grad) for i, t in enumerate(rope_args(torch.float64, device, 2, 3, 1, 5, 8))]
    q, k, cos, sin = (t * 1 if t.requires_grad else t for t in leaves)
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        out = myns.rope(q, k, cos, sin)
    ptrs = {t.data_ptr() for t in packed}
    assert cos.data_ptr() in ptrs and sin.data_ptr() in ptrs
    assert (q.data_ptr() in ptrs, k.data_ptr() in ptrs) == (trig_grad, trig_grad)
    pick = {"both": [0, 1], "q": [0], "k": [1]}[used]
    wrt = [t for t in leaves if t.requires_grad]
    gouts = [torch.randn_like(o) for o in out]
    got = torch.autograd.grad([out[i] for i in pick], wrt, [gouts[i] for i in pick], allow_unused=True)
    ref_out = _hf_rope(*(t * 1 if t.requires_grad else t for t in leaves))
    ref = torch.autograd.grad([ref_out[i] for i in pick], wrt, [gouts[i] for i in pick], allow_unused=True)
    for a, b in zip(got, ref):
        torch.testing.assert_close(a if a is not None else torch.zeros_like(b), b if b is not None else torch.zeros_like(a))


def test_fused_linear_cross_entropy_matches_unfused_autograd(device):
    n, h, v = 37, 16, 300
    hid = torch.randn(n, h, device=device, dtype=torch.float64, requires_grad=True)
    w = torch.randn(v, h, device=device, dtype=torch.float64, requires_grad=True)
    t = ce_target(n, v, device)
    loss = myns.fused_linear_cross_entropy(hid, w, t)
    gh, gw = torch.autograd.grad(loss, (hid, w))
    ref = F.cross_entropy(hid @ w.T, t)
    rh, rw = torch.autograd.grad(ref, (hid, w))
    torch.testing.assert_close(loss, ref)
    torch.testing.assert_close(gh, rh)
    torch.testing.assert_close(gw, rw)


@pytest.mark.parametrize("shape", LN_SHAPES, ids=str)
def test_add_rms_norm(shape, dtype, device):
    x, r, w = norm_input(shape, dtype, device), norm_input(shape, dtype, device), rand(shape[-1:], dtype, device)
    y, s = check_op("add_rms_norm", [x, r, w, 1e-6])
    xi, ri = x.clone(), r.clone()
    myns.fused_add_rms_norm(xi, ri, w, 1e-6)
    # The in-place op computes the same values.
    torch.testing.assert_close(s, ri, rtol=0, atol=0)
    torch.testing.assert_close(y, xi, rtol=0, atol=0)
    g, gs = rand(shape, dtype, device), rand(shape, dtype, device)
    check_op("add_rms_norm_backward", [g, gs, s, w, 1e-6])
    check_op("add_rms_norm_backward", [g, None, s, w, 1e-6])


@pytest.mark.parametrize("dt", [torch.int32, torch.int64])
def test_integer_add_and_scale(dt, device):
    a = torch.randint(-1000, 1000, (5, 37), dtype=dt, device=device)
    b = torch.randint(-1000, 1000, (5, 37), dtype=dt, device=device)
    torch.testing.assert_close(myns.add(a, b), a + b, rtol=0, atol=0)
    torch.testing.assert_close(myns.scale(a, 3), a * 3, rtol=0, atol=0)
    out = myns.scale(a, 2.5)  # an integer times a float: float32, as a * 2.5
    assert out.dtype == (a * 2.5).dtype
    torch.testing.assert_close(out, a * 2.5)
    x = a.clone()
    myns.scale_(x, 2)
    torch.testing.assert_close(x, a * 2, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="myns::scale_.*alpha"):
        myns.scale_(x, 2.5)
    # Strided and 16-byte misaligned integer buffers take the element path.
    s = a[:, 1:]
    torch.testing.assert_close(myns.add(s, s), s + s, rtol=0, atol=0)
    # Wrapping, as torch.add.
    big = torch.full((3,), torch.iinfo(dt).max, dtype=dt, device=device)
    torch.testing.assert_close(myns.add(big, big), big + big, rtol=0, atol=0)


# --- opcheck, gradcheck, compile ----------------------------------------------------


def opcheck_cases(dtype, device):
    o = dict(dtype=dtype, device=device)
    x = torch.randn(4, 12, **o)
    w, b = torch.randn(12, **o), torch.randn(12, **o)
    q, k, cos, sin = rope_args(dtype, device)
    n, h, v = 9, 8, 21
    hid, lw = torch.randn(n, h, **o), torch.randn(v, h, **o)
    t = ce_target(n, v, device)
    logits = torch.randn(n, v, **o)
    diff = dtype != torch.float16 or device != "cpu"
    rg = lambda u: u.clone().requires_grad_(diff)  # noqa: E731
    yield torch.ops.myns.layer_norm.default, (rg(x), rg(w), rg(b), 1e-5)
    yield torch.ops.myns.layer_norm.default, (rg(x), None, None, 1e-5)
    yield torch.ops.myns.layer_norm_backward.default, (x, x, w, 1e-5)
    yield torch.ops.myns.gelu_and_mul.default, (rg(x), "tanh")
    yield torch.ops.myns.gelu_and_mul_backward.default, (x[:, :6].contiguous(), x, "none")
    yield torch.ops.myns.gelu_and_mul_backward_.default, (x.clone(), x[:, :6].contiguous(), "tanh")
    yield torch.ops.myns.silu_and_mul_backward_.default, (x.clone(), x[:, :6].contiguous())
    yield torch.ops.myns.rope.default, (rg(q), rg(k), rg(cos), rg(sin))
    yield torch.ops.myns.cross_entropy.default, (rg(logits), t, -100, "mean")
    yield torch.ops.myns.cross_entropy.default, (rg(logits), t.clamp(min=0), 3, "none")
    yield torch.ops.myns.cross_entropy_backward.default, (torch.tensor(1.0, **o), logits, t, -100, "sum")
    yield torch.ops.myns.fused_linear_cross_entropy.default, (rg(hid), rg(lw), t, -100, "mean")
    yield torch.ops.myns.fused_linear_cross_entropy.default, (rg(hid), rg(lw), t, -100, "none")
    yield torch.ops.myns.fused_linear_cross_entropy_backward.default, (torch.tensor(1.0, **o), hid, lw, t, -100, "sum")
    yield torch.ops.myns.fused_linear_cross_entropy_train.default, (hid, lw, t, -100, "mean")
    yield torch.ops.myns.fused_linear_cross_entropy_train.default, (hid, lw, t, -100, "none")
    yield torch.ops.myns.add_rms_norm.default, (rg(x), rg(x * 2), rg(w), 1e-6)
    yield torch.ops.myns.add_rms_norm_backward.default, (x, x, x, w, 1e-6)
    yield torch.ops.myns.add_rms_norm_backward.default, (x, None, x, w, 1e-6)


@pytest.mark.parametrize("case", range(19))
def test_opcheck(case, dtype, device):
    op, args = list(opcheck_cases(dtype, device))[case]
    opcheck(op, args)


def test_gradcheck(device):
    o = dict(dtype=torch.float64, device=device, requires_grad=True)
    x, w, b = torch.randn(3, 6, **o), torch.randn(6, **o), torch.randn(6, **o)
    assert torch.autograd.gradcheck(lambda a, c, d: myns.layer_norm(a, c, d, 1e-5), (x, w, b))
    assert torch.autograd.gradcheck(lambda a: myns.layer_norm(a, None, None, 1e-5), (x,))
    assert torch.autograd.gradcheck(lambda a, d: myns.layer_norm(a, None, d, 1e-5), (x, b))
    for approx in ["none", "tanh"]:
        assert torch.autograd.gradcheck(lambda a: myns.gelu_and_mul(a, approx), (torch.randn(3, 8, **o),))
    q, k, cos, sin = (t.detach().requires_grad_() for t in rope_args(torch.float64, device, 2, 2, 1, 3, 4))
    assert torch.autograd.gradcheck(myns.rope, (q, k, cos, sin))
    assert torch.autograd.gradgradcheck(myns.rope, (q, k, cos, sin))
    t = ce_target(5, 7, device)
    for red in ["mean", "sum", "none"]:
        assert torch.autograd.gradcheck(lambda z: myns.cross_entropy(z, t, -100, red), (torch.randn(5, 7, **o),))
        assert torch.autograd.gradcheck(
            lambda hh, ww: myns.fused_linear_cross_entropy(hh, ww, t, -100, red), (torch.randn(5, 3, **o), torch.randn(7, 3, **o))
        )
    r = torch.randn(3, 6, **o)
    assert torch.autograd.gradcheck(lambda a, c, d: myns.add_rms_norm(a, c, d, 1e-6), (x, r, w))
    assert torch.autograd.gradcheck(lambda a, c, d: myns.add_rms_norm(a, c, d, 1e-6)[0], (x, r, w))
    assert torch.autograd.gradcheck(lambda a, c, d: myns.add_rms_norm(a, c, d, 1e-6)[1], (x, r, w))


def test_compile_training_ops(device):
    """A small step made of the new ops compiles in one graph, with dynamic
    shapes, forward and backward, and agrees with eager."""

    def step(hid, w_ln, lm, q, k, cos, sin, t):
        h = myns.layer_norm(hid, w_ln, None, 1e-5)
        h = myns.gelu_and_mul(torch.cat([h, h], -1), "tanh")
        h, s = myns.add_rms_norm(h, hid, w_ln, 1e-6)
        rq, rk = myns.rope(q, k, cos, sin)
        return myns.fused_linear_cross_entropy(h + s, lm, t) + myns.cross_entropy(h @ lm.T, t) + rq.sum() + rk.sum()

    def inputs(n):
        o = dict(device=device)
        hid = torch.randn(n, 8, **o, requires_grad=True)
        w_ln = torch.randn(8, **o, requires_grad=True)
        lm = torch.randn(30, 8, **o, requires_grad=True)
        q, k, cos, sin = rope_args(torch.float32, device, 1, 2, 1, n, 4)
        return hid, w_ln, lm, q.requires_grad_(), k.requires_grad_(), cos, sin, ce_target(n, 30, device)

    explanation = torch._dynamo.explain(step)(*inputs(6))
    assert explanation.graph_break_count == 0
    compiled = torch.compile(step, fullgraph=True, dynamic=True)
    for n in (6, 11):
        args = inputs(n)
        eager = step(*args)
        got = compiled(*args)
        torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
        ge = torch.autograd.grad(eager, args[:5])
        gc = torch.autograd.grad(compiled(*args), args[:5])
        for a, b in zip(gc, ge):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_autocast_as_aten(device):
    """Under torch.autocast each op's result dtype is its aten counterpart's."""
    dev = "cuda" if device == "cuda" else "cpu"
    x = torch.randn(4, 8, device=device)
    xb = x.bfloat16()
    w = torch.randn(8, device=device)
    t = torch.randint(0, 8, (4,), device=device)
    w8 = torch.randn(8, 8, device=device)
    with torch.autocast(dev, dtype=torch.bfloat16):
        pairs = [
            (myns.matmul(x, x.T), torch.matmul(x, x.T)),
            (myns.bmm(x[None], x.T[None]), torch.bmm(x[None], x.T[None])),
            (myns.layer_norm(xb, None, None, 1e-5), F.layer_norm(xb, (8,))),
            (myns.rms_norm(xb, w.bfloat16(), 1e-5), F.rms_norm(xb, (8,), w.bfloat16())),
            (myns.softmax(xb, -1), torch.softmax(xb, -1)),
            (myns.cross_entropy(xb, t), F.cross_entropy(xb, t)),
            (myns.fused_linear_cross_entropy(x, w8, t), F.cross_entropy(F.linear(x, w8), t)),
        ]
    for i, (ours, aten) in enumerate(pairs):
        assert ours.dtype == aten.dtype, f"case {i}: {ours.dtype} vs aten {aten.dtype}"


# --- errors ---------------------------------------------------------------------


def err(fn, *args, cls=RuntimeError):
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value) is cls, f"raised {type(info.value).__name__}, expected {cls.__name__}: {info.value}"
    assert "Exception raised from" not in str(info.value)
    return str(info.value)


def test_errors(device):
    o = dict(device=device)
    x = torch.randn(3, 8, **o)
    assert "`weight`" in err(myns.layer_norm, x, torch.ones(5, **o), None, 1e-5)
    assert "`bias`" in err(myns.layer_norm, x, None, torch.ones(8, 1, **o), 1e-5)
    assert "`eps`" in err(myns.layer_norm, x, None, None, -1.0, cls=ValueError)
    assert "`approximate`" in err(myns.gelu_and_mul, x, "fast", cls=ValueError)
    assert "even" in err(myns.gelu_and_mul, torch.randn(3, 5, **o), "none")
    q, k, cos, sin = rope_args(torch.float32, device)
    assert "`k`" in err(myns.rope, q, k[:, :, :2], cos, sin)
    assert "`cos`" in err(myns.rope, q, k, cos[:, :3], sin[:, :3])
    assert "`sin`" in err(myns.rope, q, k, cos, sin[:, :3])
    assert "dtype" in err(myns.rope, q, k.double(), cos, sin)
    logits, t = torch.randn(4, 6, **o), torch.tensor([0, 1, 2, 3], **o)
    assert "`reduction`" in err(myns.cross_entropy, logits, t, -100, "avg", cls=ValueError)
    assert "int64" in err(myns.cross_entropy, logits, t.int(), cls=NotImplementedError)
    assert "`target`" in err(myns.cross_entropy, logits, t[:3])
    assert "`weight`" in err(myns.fused_linear_cross_entropy, logits, torch.randn(9, 5, **o), t)
    assert "`residual`" in err(myns.add_rms_norm, x, torch.randn(3, 7, **o), torch.ones(8, **o), 1e-6)


def test_cross_entropy_target_out_of_range():
    """On the CPU an IndexError naming the value; on CUDA NaN in that row's
    loss (documented), and the context stays usable."""
    logits = torch.randn(4, 6)
    t = torch.tensor([0, 9, -100, 2])
    m = err(myns.cross_entropy, logits, t, cls=IndexError)
    assert "myns::cross_entropy" in m and "9" in m
    err(myns.fused_linear_cross_entropy, torch.randn(4, 3), torch.randn(6, 3), torch.tensor([0, -5, 1, 1]), cls=IndexError)
    if torch.cuda.is_available():
        rows = myns.cross_entropy(logits.cuda(), t.cuda(), -100, "none").cpu()
        assert rows[1].isnan() and not rows[[0, 2, 3]].isnan().any()
        assert myns.cross_entropy(logits.cuda(), t.cuda()).isnan().item()
        assert myns.fused_linear_cross_entropy(torch.randn(4, 3).cuda(), torch.randn(6, 3).cuda(), t.cuda()).isnan().item()
        # Training: the gradient kernel writes the losses too.
        hid = torch.randn(4, 3, device="cuda", requires_grad=True)
        assert myns.fused_linear_cross_entropy(hid, torch.randn(6, 3).cuda(), t.cuda()).isnan().item()
        # The CUDA context is fine: a valid call works afterwards.
        ok = myns.cross_entropy(logits.cuda(), torch.tensor([0, 1, 2, 3]).cuda())
        assert math.isfinite(ok.item())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.cuda
def test_fused_linear_cross_entropy_memory():
    """The [N, V] logits never exist: the extra memory of forward + backward
    is far below them (a chunk of logits, the gradients, a weight-sized
    workspace)."""
    n, h, v = 8192, 256, 32000
    hid = torch.randn(n, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(v, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    t = torch.randint(0, v, (n,), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    myns.fused_linear_cross_entropy(hid, w, t).backward()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    logits_bytes = n * v * 2
    assert extra < logits_bytes / 4, f"peak extra {extra / 2**20:.0f} MiB vs logits {logits_bytes / 2**20:.0f} MiB"


def test_every_training_op_has_a_case():
    for name in ["rope", "layer_norm", "layer_norm_backward", "gelu_and_mul", "gelu_and_mul_backward",
                 "gelu_and_mul_backward_", "silu_and_mul_backward_", "cross_entropy",
                 "cross_entropy_backward", "fused_linear_cross_entropy", "fused_linear_cross_entropy_backward",
                 "fused_linear_cross_entropy_train", "add_rms_norm", "add_rms_norm_backward"]:
        assert name in CASES and name in myns.op_names()


_ = (DTYPES, _ce_loss)
