"""The CUDA kernel paths and the shapes that reach them, shared by
test_cuda_paths.py (opcheck, value and gradient checks per path) and
tests/gpu/sanitize_workload.py (compute-sanitizer over the same paths).

* Matmul: every forced variant of test_matmul_kernels.VARIANTS (the matmul
  tests own the variant names: tile widths of the Hopper kernel, its split-K
  and TF32 forms, the mma.sync and CUDA-core tiles and their splits), each on
  an aligned product that spans several tiles (both operand layouts) and on
  unaligned ones (odd K and N; a base pointer one element off), and on a
  batched-decode product (40 rows: the skinny kernel's variants). A module
  there named PATH_PRODUCTS replaces the products below.
* Row reductions: every build of ``MYNS_ROW_KERNEL`` (``r1``, ``r2``,
  ``r2:32:8``, ``general``, ``general:32:8``, automatic) in each dtype, on
  rows the build can hold, vector (16-byte packs) and scalar (odd length).

Checks go through op_cases.check_op (bounds of tests/python/bounds.py, NaN
canaries around the arguments).
"""

from __future__ import annotations

import contextlib
import os

import torch
from torch.library import opcheck

import myns
from op_cases import assert_matches, check_op, expect, norm_input, softmax_input

F64, F32, F16, BF16 = torch.float64, torch.float32, torch.float16, torch.bfloat16

# --- matmul ------------------------------------------------------------------

# (label, (M, K, N), a transposed, b transposed, padded rows, base pointer offset)
PRODUCTS = [
    ("aligned-nn", (200, 256, 264), False, False, True, 0),
    ("aligned-nt", (200, 256, 264), False, True, True, 0),
    ("unaligned", (130, 257, 129), False, False, False, 0),
    ("offset-by-one", (129, 72, 136), False, False, True, 1),
    # Batched decode against nn.Linear's K-major weights: the skinny
    # kernel's builds where forced (8 m blocks in the streaming one), 17
    # strips, the last one partial.
    ("decode", (40, 320, 1048), False, True, True, 0),
]


def matmul_module():
    import test_matmul_kernels as mk  # the matmul tests own the variants

    return mk


def matmul_paths():
    """[(kind, variant)]: every forced matmul variant, by kind (f16, bf16, tf32, f32, f64)."""
    mk = matmul_module()
    return [(k, v) for k, vs in mk.VARIANTS.items() for v in vs]


def products():
    return getattr(matmul_module(), "PATH_PRODUCTS", PRODUCTS)


def isolated(variant) -> bool:
    """Variants the matmul tests run in a child process (a hung barrier in
    the Hopper kernels would hang the GPU)."""
    return variant in matmul_module().HOPPER


def operand(rows, cols, dtype, transposed, pad, offset, device="cuda"):
    if transposed:
        return operand(cols, rows, dtype, False, pad, offset, device).t()
    width = -(-cols // 8) * 8 if pad else cols
    buf = torch.randn(rows * width + offset, dtype=dtype, device=device)
    return buf[offset:].view(rows, width)[:, :cols]


@contextlib.contextmanager
def forced_matmul(kind, variant):
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    myns.set_override("MYNS_MATMUL_KERNEL", variant)
    try:
        yield matmul_module().DT[kind]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
        myns.set_override("MYNS_MATMUL_KERNEL", os.environ.get("MYNS_MATMUL_KERNEL"))


def check_matmul_grads(a, b, what, ref_device=None):
    """Autograd through myns.matmul: grad a = g b^T, grad b = a^T g, each a
    product under the same forced variant, within the matmul bound."""
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    out = myns.matmul(a, b)
    g = torch.randn_like(out)
    ea = expect("matmul", [g, b.detach().t()], ref_device)
    eb = expect("matmul", [a.detach().t(), g], ref_device)
    out.backward(g)
    assert_matches((a.grad,), ea, f"{what}: grad a")
    assert_matches((b.grad,), eb, f"{what}: grad b")


def check_matmul_path(kind, variant, with_opcheck=True, with_grads=True, device="cuda", prods=None, ref_device=None):
    """One forced variant: every product checked, opcheck and gradients on
    the first one. Returns the number of checked products. (`device="cpu"`:
    a dry run of this code on the CPU, where the variant has no effect;
    `ref_device`: where the float64 references are computed.)"""
    n = 0
    with forced_matmul(kind, variant) as dtype:
        for label, (m, k, nn), ta, tb, pad, off in prods or products():
            a = operand(m, k, dtype, ta, pad, off, device)
            b = operand(k, nn, dtype, tb, pad, off, device)
            what = f"matmul {kind} {variant} {label} {m}x{k}x{nn}"
            check_op("matmul", [a, b], what=what, ref_device=ref_device)
            n += 1
            if n == 1 and with_opcheck:
                opcheck(torch.ops.myns.matmul.default, (a.detach().requires_grad_(), b.detach().requires_grad_()))
            if n == 1 and with_grads:
                check_matmul_grads(a, b, what, ref_device)
        # bmm through the same variant: batches of the aligned product.
        a = operand(3 * 64, 256, dtype, False, True, 0, device).reshape(3, 64, 256)
        b = operand(256, 3 * 72, dtype, False, True, 0, device).reshape(256, 3, 72).permute(1, 0, 2)
        check_op("bmm", [a, b], what=f"bmm {kind} {variant}", ref_device=ref_device)
        n += 1
    return n


# --- row reductions ------------------------------------------------------------

ROW_BUILDS = ["auto", "r1", "r2", "r2:32:8", "general", "general:32:8"]
ROW_DTYPES = [F32, BF16, F16, F64]
# Candidate shapes: wide vector rows, odd (scalar) rows, short rows for a
# warp per row, and a partial last block of rows; each build takes those it
# can hold.
ROW_SHAPES = [(13, 1000), (13, 1001), (37, 120), (13, 62), (37, 63), (5, 3, 248)]


# The four-pack build's longest row: 1024 threads of four packs (src/rowwise.rs).
R4_MAX_UNITS = 4096


def build_covers(build, shape, dtype) -> bool:
    """Whether a forced build can hold a row of this shape (else the op must refuse)."""
    es = torch.tensor([], dtype=dtype).element_size()
    pack = 16 // es if shape[-1] % (16 // es) == 0 else 1  # else scalar kernels
    parts = build.split(":")
    regs = {"r1": 1, "r2": 2, "r4": 4}.get(parts[0])
    units = shape[-1] // pack
    if regs == 4:  # rows covered exactly: whole warps of four packs, at most 1024 threads
        threads = int(parts[1]) if len(parts) > 1 else units // 4
        return units % 128 == 0 and units <= R4_MAX_UNITS and threads * 4 == units
    threads = int(parts[1]) if len(parts) > 1 else 1024
    return regs is None or threads * regs >= units


def row_paths():
    """[(build, dtype, shape)] for every build, dtype and shape it holds."""
    return [(b, d, s) for b in ROW_BUILDS for d in ROW_DTYPES for s in ROW_SHAPES if build_covers(b, s, d)]


@contextlib.contextmanager
def forced_rows(build):
    myns.set_override("MYNS_ROW_KERNEL", None if build == "auto" else build)
    try:
        yield
    finally:
        myns.set_override("MYNS_ROW_KERNEL", os.environ.get("MYNS_ROW_KERNEL"))


# The four-pack build (`regs4` in src/rowwise.rs), which only rms_norm and
# layer_norm have, forced on them alone.
FOUR_PACK_BUILDS = ["r4"]
FOUR_PACK_SHAPES = [(13, 1024), (5, 3, 2048), (3, 4096), (2, 16384), (2, 32768)]  # up to 1024 threads a row


def four_pack_paths():
    """[(build, dtype, shape)] of the four-pack build, on rows it covers."""
    return [(b, d, s) for b in FOUR_PACK_BUILDS for d in ROW_DTYPES for s in FOUR_PACK_SHAPES if build_covers(b, s, d)]


def check_four_pack_path(build, dtype, shape, with_opcheck=True, device="cuda", ref_device=None):
    """rms_norm and layer_norm (with both parameters, neither, and the bias
    alone) under the forced four-pack build, on 16-byte packs and, where the
    build holds the row as single elements (at most R4_MAX_UNITS), one
    element off alignment. Returns the number of checked calls."""
    what = f"{build} {str(dtype).removeprefix('torch.')} {shape}"
    checked = 0
    with forced_rows(build):
        x, w = norm_input(shape, dtype, device, 2.0), torch.randn(shape[-1], dtype=dtype, device=device)
        b = torch.randn(shape[-1], dtype=dtype, device=device)
        inputs = [(x, "")]
        if shape[-1] <= R4_MAX_UNITS:  # one element off, the row is that many single elements
            inputs.append((norm_input((x.numel() + 1,), dtype, device, 2.0)[1:].view(shape), ", unaligned"))
        for xi, how in inputs:
            check_op("rms_norm", [xi, w, 1e-6], what=f"rms_norm {what}{how}", ref_device=ref_device)
            for params, name in [((w, b), ""), ((None, None), " (no parameters)"), ((None, b), " (bias only)")]:
                check_op("layer_norm", [xi, *params, 1e-5], what=f"layer_norm{name} {what}{how}", ref_device=ref_device)
            checked += 4
        if with_opcheck:
            opcheck(torch.ops.myns.rms_norm.default, (x.clone().requires_grad_(), w.clone().requires_grad_(), 1e-6))
            opcheck(torch.ops.myns.layer_norm.default, (x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_(), 1e-5))
    return checked


def check_row_path(build, dtype, shape, with_opcheck=True, with_grads=True, device="cuda", ref_device=None):
    """rms_norm, fused_add_rms_norm, add_rms_norm, layer_norm (with and
    without its parameters) and softmax under one forced build:
    values, opcheck, and gradients through autograd (the backward ops on the
    forced forward's outputs). Returns the number of checked calls.
    (`device="cpu"`: a dry run, the build has no effect there.)"""
    dev = device
    what = f"{build} {str(dtype).removeprefix('torch.')} {shape}"
    with forced_rows(build):
        x, r = norm_input(shape, dtype, dev, 2.0), norm_input(shape, dtype, dev)
        w = torch.randn(shape[-1], dtype=dtype, device=dev)
        xs = softmax_input(shape, -1, dtype, dev, 2.0)
        check_op("rms_norm", [x, w, 1e-6], what=f"rms_norm {what}", ref_device=ref_device)
        check_op("fused_add_rms_norm", [x.clone(), r.clone(), w, 1e-6], what=f"fused_add_rms_norm {what}", ref_device=ref_device)
        check_op("softmax", [xs, -1], what=f"softmax {what}", ref_device=ref_device)
        check_op("add_rms_norm", [x, r, w, 1e-6], what=f"add_rms_norm {what}", ref_device=ref_device)
        b = torch.randn(shape[-1], dtype=dtype, device=dev)
        check_op("layer_norm", [x, w, b, 1e-5], what=f"layer_norm {what}", ref_device=ref_device)
        check_op("layer_norm", [x, None, None, 1e-5], what=f"layer_norm (no parameters) {what}", ref_device=ref_device)
        if with_opcheck:
            opcheck(torch.ops.myns.rms_norm.default, (x.clone().requires_grad_(), w.clone().requires_grad_(), 1e-6))
            opcheck(torch.ops.myns.fused_add_rms_norm.default, (x.clone(), r.clone(), w, 1e-6))
            opcheck(torch.ops.myns.softmax.default, (xs.clone().requires_grad_(), -1))
        if with_grads:
            g = torch.randn(shape, dtype=dtype, device=dev)
            xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
            expected = expect("rms_norm_backward", [g, x, w, 1e-6], ref_device)
            myns.rms_norm(xg, wg, 1e-6).backward(g)
            assert_matches((xg.grad, wg.grad), expected, f"rms_norm gradients {what}")
            xg = xs.clone().requires_grad_()
            y = myns.softmax(xg, -1)
            expected = expect("softmax_backward", [g, y.detach(), -1], ref_device)
            y.backward(g)
            assert_matches((xg.grad,), expected, f"softmax gradient {what}")
    return 6 + 2 * with_grads


def gradcheck_row_build(build, device="cuda"):
    """torch.autograd.gradcheck (float64, finite differences) through the
    forced build on a row it holds."""
    o = dict(dtype=F64, device=device, requires_grad=True)
    with forced_rows(build):
        x, w = torch.randn(3, 64, **o), torch.randn(64, **o)
        assert torch.autograd.gradcheck(lambda a, b: myns.rms_norm(a, b, 1e-5), (x, w))
        assert torch.autograd.gradcheck(lambda a: myns.softmax(a, -1), (x,))
        assert torch.autograd.gradcheck(lambda a, b: myns.layer_norm(a, b, None, 1e-5), (x, w))
        assert torch.autograd.gradcheck(lambda a, b: myns.add_rms_norm(a, a * 0.5, b, 1e-5), (x, w))
