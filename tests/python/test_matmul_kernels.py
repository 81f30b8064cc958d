"""Every CUDA kernel variant of myns::matmul / myns::bmm against a float64
reference, with an elementwise error bound from first principles.

For each output element, with mag = sum_k |a_ik| |b_kj| (float64):

    |out - ref| <= C * (u_in + sqrt(K) u_acc) * mag + u_out * |ref| + u_sub

u_in: the rounding of the operands the kernel multiplies (0 for float16,
bfloat16 and float32 inputs, which the tensor cores or FMAs take exactly;
2^-11 for TF32, which rounds a float32 to 10 mantissa bits, to nearest: a
product of two such is off by at most 2 u_in + u_in^2 of itself, hence
C = 2); u_acc = 2^-24 (float32 accumulation, errors that grow like sqrt(K)
for independent roundings); u_out: the output dtype's unit roundoff (the
final rounding); u_sub: half the output's subnormal spacing. Not a
normwise error, and not a tolerance times K: a wrong or unwritten element, a
dropped k-term, or float32 silently computed as TF32 fails it (the
`test_bound_*` tests check that the bound rejects those).

Fresh random data per case; odd shapes crossing tile edges; every layout:
row-major, transposed views, rows padded so the fast kernels read them in
place, rows of any length (a leading dimension that is not a whole number of
16 bytes: staged through an aligned copy), storage offsets, strides with no
unit dimension; split-K, the skinny kernel with every cluster size, the
Hopper kernels (cooperative and ping-pong). Output buffers are poisoned with
NaN first (the op allocates through PyTorch's caching allocator, which hands
the same block back for the same size). `MYNS_MATMUL_KERNEL` forces a
variant (see src/gemm/mod.rs).

`python tests/python/test_matmul_kernels.py --sanitize [--only-wg]
[--kinds=f32,...]` runs a short sweep of every variant (or the Hopper
kernels' alone, or those of some kinds), meant for `compute-sanitizer`.
"""

import math
import os
import subprocess
import sys
import zlib

import pytest
import torch

import myns  # noqa: F401

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

# "f32x": float32 on the FP64 tensor cores (compute capability 9.x): exact
# products summed in float64, one rounding to float32.
DT = {"f64": torch.float64, "f32": torch.float32, "f32x": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
U_IN = {"f64": 0.0, "f32": 0.0, "f32x": 0.0, "tf32": 2.0**-11, "f16": 0.0, "bf16": 0.0}
U_ACC = {"f64": 2.0**-53, "f32": 2.0**-24, "f32x": 2.0**-53, "tf32": 2.0**-24, "f16": 2.0**-24, "bf16": 2.0**-24}
U_OUT = {"f64": 2.0**-53, "f32": 2.0**-24, "f32x": 2.0**-24, "tf32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
U_SUB = {"f64": 2.0**-1075, "f32": 2.0**-150, "f32x": 2.0**-150, "tf32": 2.0**-150, "f16": 2.0**-25, "bf16": 2.0**-134}
C = 2.0


def ref_and_bound(a, b, kind):
    """a @ b in float64, and each element's bound for it computed as `kind`."""
    ad, bd = a.double(), b.double()
    ref = ad @ bd
    mag = ad.abs() @ bd.abs()
    k = a.shape[-1]
    bound = C * (U_IN[kind] + math.sqrt(k) * U_ACC[kind]) * mag + U_OUT[kind] * ref.abs() * 1.001 + U_SUB[kind]
    return ref, bound


def bound_violations(out, a, b, kind):
    """Indices of elements of `out` (a @ b computed as `kind`) outside the
    bound, as a bool tensor, plus ref for messages."""
    ref, bound = ref_and_bound(a, b, kind)
    return (out.double() - ref).abs() > bound, ref


def twice_bound(a, b, kind):
    """2 (a @ b) and the bound for it computed as `<variant>+acc` does: y1 =
    a @ b stored (within B of ref), then y2 = round(y1 + s) with s the
    kernel's sum for a @ b again (within B of ref too, B covering more than
    the accumulation error) added in float32: |y2 - 2 ref| <= 2 B +
    (u_acc + u_out) |y1 + s|, |y1 + s| <= 2 |ref| + 2 B."""
    ref, bound = ref_and_bound(a, b, kind)
    return 2 * ref, 2 * bound + (U_ACC[kind] + U_OUT[kind]) * (2 * ref.abs() + 2 * bound) * 1.001 + U_SUB[kind]


def check_twice(out, a, b, kind):
    assert out.shape == a.shape[:-1] + b.shape[-1:] and out.dtype == DT[kind]
    if out.numel() == 0:
        return
    assert torch.isfinite(out).all(), "non-finite output"
    ref, bound = twice_bound(a, b, kind)
    bad = (out.double() - ref).abs() > bound
    if bad.any():
        i = bad.nonzero()[0].tolist()
        raise AssertionError(f"{int(bad.sum())} elements off, first at {i}: {out[tuple(i)].item()} vs 2 a @ b = {ref[tuple(i)].item()}")


def check(out, a, b, kind):
    """`out` is a @ b as `kind`: shape, dtype, contiguity, every element
    written and within its bound."""
    assert out.shape == a.shape[:-1] + b.shape[-1:] and out.dtype == DT[kind] and out.is_contiguous()
    if out.numel() == 0:
        return
    assert torch.isfinite(out).all(), "non-finite output (unwritten or garbage elements)"
    bad, ref = bound_violations(out, a, b, kind)
    if bad.any():
        i = bad.nonzero()[0].tolist()
        raise AssertionError(f"{int(bad.sum())} elements off, first at {i}: {out[tuple(i)].item()} vs {ref[tuple(i)].item()}")


# ---- the bound itself (CPU): it must reject the mistakes it is there for


def test_bound_rejects_tf32_for_float32():
    """Products of TF32-rounded operands fail the float32 bound."""
    torch.manual_seed(0)
    a, b = torch.randn(64, 256), torch.randn(256, 48)
    r = lambda x: (x.view(torch.int32) + 0x1000 & ~0x1FFF).view(torch.float32)  # noqa: E731  to nearest
    as_tf32 = (r(a).double() @ r(b).double()).float()
    assert bound_violations(as_tf32, a, b, "f32")[0].any()
    assert not bound_violations(as_tf32, a, b, "tf32")[0].any()
    assert not bound_violations((a.double() @ b.double()).float(), a, b, "f32")[0].any()


@pytest.mark.parametrize("kind", ["bf16", "f16", "f32", "tf32"])
def test_bound_rejects_a_dropped_term(kind):
    """Leaving out one k-term of one element fails the bound, at any K."""
    torch.manual_seed(1)
    for k in [16, 1024, 8192]:
        a = torch.randn(8, k).to(DT[kind])
        b = torch.randn(k, 8).to(DT[kind])
        out = (a.double() @ b.double()).to(DT[kind])
        assert not bound_violations(out, a, b, kind)[0].any()
        j = int((a[3].double() * b[:, 5].double()).abs().argmax())
        dropped = out.clone()
        dropped[3, 5] = (a[3].double() @ b[:, 5].double() - a[3, j].double() * b[j, 5].double()).to(DT[kind])
        assert bound_violations(dropped, a, b, kind)[0][3, 5], f"K = {k}"


# ---- operands

def make(rows, cols, dtype, layout, device="cuda"):
    """A [rows, cols] operand:
    n: row-major, rows padded to 8 elements (the fast kernels read it in place);
    t: a transposed view of such storage;
    u: row-major with rows exactly `cols` long (a leading dimension that is
       not a whole number of 16 bytes when cols is odd) and a storage offset
       of one element;
    v: a transposed view of such storage;
    w: row-major with rows exactly `cols` long from an aligned start (what
       torch.randn gives: an odd K or N leaves every other row off 16 bytes);
    s: every second element of every second row (no unit stride)."""
    if layout in "tv":
        return make(cols, rows, dtype, "n" if layout == "t" else "u", device).t()
    if layout == "n":
        width = -(-cols // 8) * 8
        return torch.randn(rows, width, dtype=dtype, device=device)[:, :cols]
    if layout == "u":
        return torch.randn(rows * cols + 1, dtype=dtype, device=device)[1:].view(rows, cols)
    if layout == "w":
        return torch.randn(rows, cols, dtype=dtype, device=device)
    return torch.randn(2 * rows, 2 * cols + 1, dtype=dtype, device=device)[::2, 1::2]


def poison(numel, dtype):
    """Leave a NaN-filled block of this size in the caching allocator."""
    t = torch.full((max(numel, 1),), float("nan"), dtype=dtype, device="cuda")
    del t


# Forced variants per dtype: src/gemm/plan.rs names (`/s`: split-K, or for
# `skinny` blocks per cluster).
VARIANTS = {
    "f16": ["auto", "generic", "256", "128", "64", "16", "64/3", "16/5", "skinny", "skinny/2", "skinny_tma", "skinny_tma/4", "skinny_tma16", "skinny_tma4", "wg", "wg/3", "wg128", "wg64/2", "wgp", "wgp64/2", "wg128c2", "wgpc2/2", "wg192c2", "wgh", "wgh64/2", "wgh128c2", "wg64c2/2", "wg64k4", "wg192k2", "wgh128k2", "wgh144", "wgh144k2", "wg320", "wg112", "wg160", "wg128n2", "wgh64n2", "wgp128n2"],
    "bf16": ["auto", "generic", "256", "128", "64", "16", "128/2", "16/5", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma8", "skinny_tma16/2", "skinny_tma4/2", "wg", "wg/3", "wg256", "wg128/3", "wg64", "wgp128", "wgp64/3", "wg256c1", "wg256c2", "wgc2/3", "wgp128c2", "wgp128c1", "wg192", "wg192c2", "wg192/2", "wgh128", "wgh64", "wgh128/3", "wgh64c2", "wgh64c2/3", "wg64c2", "wg64k2", "wg128k4", "wg192k2", "wgh64k2", "wgh128k4", "wgh144", "wgh144/3", "wgh144c2", "wg320", "wg320c2", "wg320/2", "wg96", "wg144/2", "wg176", "wg144c2", "wg112/2", "wg160/3", "wg64n2", "wgn2/3", "wg192n2", "wgh128n2"],
    "tf32": ["auto", "256", "128", "64", "16", "64/3", "16/5", "wg", "wg/3", "wg128", "wg64/2", "wg256c2", "wgr", "wgr/3", "wgr256", "wgr128/2", "wgr64", "wg192", "wgr192", "wgr256c2", "wgr128c2/2", "wgrh128", "wgrh64", "wgrh128/3", "wgrh64c2", "wgr128k2", "wgr64k4", "wg128k2", "wgrh64k2", "wg128n2", "wg64n2/2", "skinny/2", "skinny_tma", "skinny_tma/2", "skinny_tma8", "skinny_tma4/4"],
    "f32": ["auto", "generic", "256", "128", "64", "16", "256/2", "128/3", "64/4", "16/5", "skinny", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma8", "skinny_tma8/2", "skinny_tma4", "x128/2"],
    # Unsplit, so the float64 sums' bound holds (split K sums float32 partials).
    "f32x": ["x128"],
    "f64": ["auto"],
}
# (M, K, N): tiny, odd, tile edges +-1, K not a multiple of any k-tile, skinny.
SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (127, 129, 255),
    (129, 64, 257),
    (16, 1000, 300),
    (300, 200, 9),
    (1, 1031, 263),
    (1000, 72, 1003),
    (136, 1001, 130),  # K odd, M a multiple of 8
    (64, 63, 200),     # ... K inside one k-tile
    (264, 72, 1004),   # output rows 8 bytes off 16 bytes
]
LAYOUTS = ["nn", "nt", "tn", "tt", "uu", "uv", "vu", "sn", "ns", "wn", "wt", "wu"]
# Variants that force the Hopper kernels (wgmma/TMA/mbarrier, clusters): a
# broken barrier protocol there hangs the GPU rather than failing, so these
# run in one child process with a time limit.
HOPPER = {v for vs in VARIANTS.values() for v in vs if v.startswith(("wg", "skinny"))}
# `<variant>+acc` (src/gemm/mod.rs `forced`): the product, then the same
# product added through the accumulate path (gemm::run_cuda_accumulate,
# beta = 1), so out = 2 a @ b: every kernel's accumulating epilogue, the
# split-K reduction kernel's and the Hopper kernels' in-kernel split-K sum.
ACC_VARIANTS = {
    "bf16": ["auto", "generic", "256", "128/2", "16/5", "skinny", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma8", "skinny_tma4", "wg", "wg128/3", "wgp64", "wgp128/2", "wg256c2", "wgp128c2/2", "wg192c2", "wgh64/2", "wgh64c2/2", "wg64k2", "wgh64k2", "wgh144/2", "wg320", "wg144", "wg64n2"],
    "f16": ["64", "wg64/2", "wgp128", "wgh128", "wg64c2", "wg128k2", "wgh144k4", "wg320c2", "wg96/2", "wg128n2/2"],
    "tf32": ["auto", "64/3", "wg", "wg128/2", "wgr", "wgr/3", "wgr192c2", "wgrh128/2", "wgrh64c2", "wgr128k4", "wgrh128k2", "skinny", "skinny_tma", "skinny_tma/2"],
    "f32": ["auto", "generic", "256", "128/3", "16/5", "skinny/2", "skinny_tma", "skinny_tma/4", "skinny_tma8/2", "x128", "x128/3"],
    "f64": ["auto"],
}
# N = 256 and 1024: 16-byte aligned output rows, which the cooperative
# Hopper kernels accumulate into with TMA's reduce-add store; 1024 x 8192 x
# 1024: long K on less than a wave of tiles, split in two K ranges.
ACC_SHAPES = [(1, 1, 1), (7, 13, 5), (129, 64, 257), (16, 1000, 300), (300, 200, 9), (1000, 72, 1003), (129, 64, 256), (300, 1000, 1024), (1024, 8192, 1024)]
NO_WG = os.environ.get("MYNS_MATMUL_KERNEL") == "nowg"
HERE = os.path.dirname(os.path.abspath(__file__))


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on


def matmul_sweep(kind, shapes=SHAPES, layouts=LAYOUTS):
    """Every shape and layout with whatever MYNS_MATMUL_KERNEL says."""
    dtype = DT[kind]
    torch.manual_seed(zlib.crc32(kind.encode()))
    for m, k, n in shapes:
        for lay in layouts:
            a, b = make(m, k, dtype, lay[0]), make(k, n, dtype, lay[1])
            poison(m * n, dtype)
            out = torch.ops.myns.matmul(a, b)
            try:
                check(out, a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"{kind} {m}x{k}x{n} {lay}: {e}") from None


def acc_sweep(kind):
    """`+acc` under whatever MYNS_MATMUL_KERNEL says: matmul over shapes and
    layouts (output written transposed for N <= 16 too), and bmm."""
    dtype = DT[kind]
    torch.manual_seed(zlib.crc32(kind.encode()) + 2)
    for m, k, n in ACC_SHAPES:
        for lay in ["nn", "tt", "uv", "sn"]:
            a, b = make(m, k, dtype, lay[0]), make(k, n, dtype, lay[1])
            poison(m * n, dtype)
            try:
                check_twice(torch.ops.myns.matmul(a, b), a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"+acc {kind} {m}x{k}x{n} {lay}: {e}") from None
    a, b = make3(3, 65, 40, dtype, "n"), make3(3, 40, 70, dtype, "t")
    check_twice(torch.ops.myns.bmm(a, b), a, b, kind)


def make3(bsz, rows, cols, dtype, layout):
    """A [bsz, rows, cols] operand: n padded rows, t transposed view, u rows
    exactly `cols` long from a one-element offset, w the same from an
    aligned start."""
    if layout == "t":
        return make3(bsz, cols, rows, dtype, "n").transpose(1, 2)
    if layout == "u":
        return torch.randn(bsz * rows * cols + 1, dtype=dtype, device="cuda")[1:].view(bsz, rows, cols)
    if layout == "w":
        return torch.randn(bsz, rows, cols, dtype=dtype, device="cuda")
    width = -(-cols // 8) * 8
    return torch.randn(bsz, rows, width, dtype=dtype, device="cuda")[:, :, :cols]


BMM_SHAPES = [(3, 129, 72, 257), (2, 1, 300, 130), (5, 33, 17, 9), (1, 200, 64, 256), (3, 130, 1100, 260), (40, 16, 24, 20), (2, 136, 1001, 72)]


def bmm_sweep(kind):
    dtype = DT[kind]
    torch.manual_seed(zlib.crc32(kind.encode()) + 1)
    for bsz, m, k, n in BMM_SHAPES:
        for lay in ["nn", "nt", "tn", "tt", "uu", "wn", "wt"]:
            a, b = make3(bsz, m, k, dtype, lay[0]), make3(bsz, k, n, dtype, lay[1])
            poison(bsz * m * n, dtype)
            out = torch.ops.myns.bmm(a, b)
            try:
                check(out, a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"bmm {kind} {bsz}x{m}x{k}x{n} {lay}: {e}") from None


def hopper_sweep():
    """Every Hopper variant of every kind, matmul and bmm (in the child)."""
    failures = []
    for kind, variants in VARIANTS.items():
        set_tf32(kind == "tf32")
        for v in variants:
            if v not in HOPPER:
                continue
            myns.set_override("MYNS_MATMUL_KERNEL", v)
            for fn in (matmul_sweep, bmm_sweep):
                try:
                    fn(kind)
                except AssertionError as e:
                    failures.append(f"{v}: {e}")
            torch.cuda.synchronize()
            print(f"{kind} {v} done", flush=True)
        for v in ACC_VARIANTS.get(kind, []):
            if v not in HOPPER:
                continue
            myns.set_override("MYNS_MATMUL_KERNEL", v + "+acc")
            try:
                acc_sweep(kind)
            except AssertionError as e:
                failures.append(f"{v}+acc: {e}")
            torch.cuda.synchronize()
            print(f"{kind} {v}+acc done", flush=True)
    myns.set_override("MYNS_MATMUL_KERNEL", None)
    assert not failures, "\n".join(failures)


@pytest.fixture
def kind_env(request, kernel_override):
    """Sets TF32 and the forced variant; restores both."""
    kind, variant = request.param
    if kind == "f32x" and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("float32 on the FP64 tensor cores runs on compute capability 9.x only")
    if NO_WG:
        variant = "nowg" if variant == "auto" else variant
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(kind == "tf32")
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    yield kind, variant
    set_tf32(old)


CASES = [(k, v) for k, vs in VARIANTS.items() for v in vs if v not in HOPPER]


@cuda
@pytest.mark.parametrize("kind_env", CASES, indirect=True, ids=[f"{k}-{v}" for k, v in CASES])
def test_matmul_variants(kind_env):
    matmul_sweep(kind_env[0])


@cuda
@pytest.mark.parametrize(
    "kind_env",
    [("bf16", "auto"), ("f16", "128"), ("f16", "16/3"), ("tf32", "auto"), ("tf32", "64"), ("f32", "auto"), ("f32", "16/2"), ("f32x", "x128"), ("f64", "auto")],
    indirect=True,
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def test_bmm_variants(kind_env):
    bmm_sweep(kind_env[0])


ACC_CASES = [(k, v + "+acc") for k, vs in ACC_VARIANTS.items() for v in vs if v not in HOPPER]


@cuda
@pytest.mark.parametrize("kind_env", ACC_CASES, indirect=True, ids=[f"{k}-{v}" for k, v in ACC_CASES])
def test_accumulate_variants(kind_env):
    """c += a @ b (beta = 1) on every non-Hopper kernel; the Hopper ones in
    test_hopper_variants' child."""
    acc_sweep(kind_env[0])


def test_twice_bound_rejects_a_missing_accumulate():
    """The `+acc` bound fails a result that dropped the old value (a @ b
    alone) and one that added it twice."""
    torch.manual_seed(3)
    for kind in ["bf16", "f32"]:
        a, b = torch.randn(32, 300).to(DT[kind]), torch.randn(300, 24).to(DT[kind])
        once = (a.double() @ b.double())
        ref, bound = twice_bound(a, b, kind)
        assert not ((2 * once).to(DT[kind]).double() - ref).abs().gt(bound).any()
        assert (once.to(DT[kind]).double() - ref).abs().gt(bound).any()
        assert ((3 * once).to(DT[kind]).double() - ref).abs().gt(bound).any()


@cuda
@pytest.mark.skipif(NO_WG, reason="MYNS_MATMUL_KERNEL=nowg")
def test_hopper_variants():
    """The Hopper kernels forced, every variant, in a child process with a
    time limit (a hung barrier protocol fails instead of hanging)."""
    code = f"import sys; sys.path.insert(0, {HERE!r}); import test_matmul_kernels as t; t.hopper_sweep(); print('child ok')"
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("no result within 600 s (a hung kernel?)")
    assert r.returncode == 0 and "child ok" in r.stdout, f"{r.stdout[-3000:]}\n{r.stderr[-5000:]}"


def edge_cases(dtype):
    """(a, b) pairs at the edges: K = 1, very long K, M or N of 1, offsets,
    odd strides, the unaligned leading dimensions of LM heads."""
    r = lambda *s: torch.randn(*s, dtype=dtype, device="cuda")  # noqa: E731
    yield r(33, 1), r(1, 70)                           # K = 1
    yield r(2, 131072), r(131072, 3)                   # very long K, tiny M, N
    yield r(64, 40000), r(40000, 64)                   # long K on the tiled kernels
    yield r(1, 4096), r(4096, 1)                       # a dot product
    yield r(1, 333), r(333, 4000)                      # M = 1
    yield r(4000, 333), r(333, 1)                      # N = 1
    yield r(4097, 64)[1:], r(64, 300)                  # a storage offset (aligned rows)
    yield r(300, 129)[:, 1:], r(128, 77).t().contiguous().t()  # an odd offset, then a column-major b
    yield r(100, 3, 50)[:, 1, :], r(50, 2, 60)[:, 0, :]  # row strides of 150 and 120
    yield r(513, 4095), r(4095, 257)                   # K not a multiple of 8
    yield r(520, 4095), r(4095, 257)                   # ... M a multiple of 8
    yield r(256, 1001)[:, :999], r(999, 300)           # ... rows longer than K (a pitch of 1001)
    yield r(257, 1024), r(1024, 1001)                  # N not a multiple of 8
    yield r(16, 4095), r(3000 * 4095 + 1)[1:].view(3000, 4095).t()  # skinny, K-major weights, odd rows and start
    yield r(3, 1000), r(1000, 32001)                   # decode against an odd-width LM head
    yield r(8, 4096), r(32001, 4096).t()               # the same with nn.Linear's weight layout


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16", "tf32", "f32"])
def test_edge_cases(kind, kernel_override):
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(kind == "tf32")
    try:
        torch.manual_seed(7)
        for i, (a, b) in enumerate(edge_cases(DT[kind])):
            poison(a.shape[0] * b.shape[1], a.dtype)
            try:
                check(torch.ops.myns.matmul(a, b), a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"case {i} {tuple(a.shape)} @ {tuple(b.shape)}: {e}") from None
    finally:
        set_tf32(old)


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16", "tf32"])
def test_unaligned_output_rows(kind, kernel_override):
    """Outputs whose rows are off 16 bytes (N = 4095, 4094, 4092, 1003,
    1001), under the automatic choice, with A and B row-major or
    transposed, M a multiple of 8 or not: on Hopper the cooperative tiles
    stage such rows in shared memory, each shifted to its global
    alignment, and the warps copy them out (a TMA store's box must start
    16-byte aligned: bench/explore/tma-rows/). bmm with a batch stride that
    is a multiple of 16 bytes and one that is not. TF32: a row-major b
    with such rows is copied into padded rows of the same orientation for
    the register-A kernel (c^T = b^T a^T), which stores any output."""
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    dtype = DT[kind]
    torch.manual_seed(11)
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(kind == "tf32")
    try:
        for m, k, n in [(512, 256, 4095), (384, 192, 4094), (256, 128, 4092), (1000, 72, 1003), (2048, 64, 1001), (300, 256, 4095), (520, 4095, 1001)]:
            a, b = torch.randn(m, k, dtype=dtype, device="cuda"), torch.randn(k, n, dtype=dtype, device="cuda")
            poison(m * n, dtype)
            try:
                check(torch.ops.myns.matmul(a, b), a, b, kind)
                check(torch.ops.myns.matmul(a, b.t().contiguous().t()), a, b, kind)
                check(torch.ops.myns.matmul(a.t().contiguous().t(), b), a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"{m}x{k}x{n}: {e}") from None
        for bsz, m, k, n in [(3, 256, 64, 1004), (2, 257, 64, 1001)]:
            a, b = torch.randn(bsz, m, k, dtype=dtype, device="cuda"), torch.randn(bsz, k, n, dtype=dtype, device="cuda")
            poison(bsz * m * n, dtype)
            check(torch.ops.myns.bmm(a, b), a, b, kind)
    finally:
        set_tf32(old)


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16", "f32"])
def test_zero_sizes(kind):
    dtype = DT[kind]
    for (m, k, n) in [(0, 5, 3), (4, 0, 3), (4, 5, 0), (0, 0, 0)]:
        a, b = torch.randn(m, k, dtype=dtype, device="cuda"), torch.randn(k, n, dtype=dtype, device="cuda")
        poison(m * n, dtype)
        out = torch.ops.myns.matmul(a, b)
        assert out.shape == (m, n) and (out == 0).all()
    for (bs, m, k, n) in [(0, 2, 3, 4), (3, 2, 0, 4)]:
        a, b = torch.randn(bs, m, k, dtype=dtype, device="cuda"), torch.randn(bs, k, n, dtype=dtype, device="cuda")
        out = torch.ops.myns.bmm(a, b)
        assert out.shape == (bs, m, n) and (out == 0).all()


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16", "tf32", "f32"])
def test_large_and_llm_shapes(kind, kernel_override):
    """The automatic choice on shapes the benchmark times (tile edges,
    unaligned widths and the backward's layouts included; pairs of blocks
    sharing A, whose rows are off 128 bytes: 1000^3's products, 800 x 1000 x
    1200's g @ b^T, 1000 x 3000 x 1000's a @ b; pairs sharing B, whose lines
    are off 32 bytes: 2000 x 1000 x 1000's a @ b and g @ b^T, over ten rows
    of tiles filling 60% of the SMs: 1280 x 3000 x 1000's a @ b; one wave of
    96- and 112-wide tiles: 768 x 2048 x 2048's and 1280 x 1280 x 2048's g @
    b^T)."""
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(kind == "tf32")
    try:
        dtype = DT[kind]
        torch.manual_seed(3)
        for m, k, n in [(1, 4096, 14336), (16, 14336, 4096), (128, 4096, 4096), (64, 4096, 4096), (2048, 2048, 2048), (4100, 1000, 4000), (1000, 4096, 4088), (1000, 4095, 2048), (512, 32001, 256),
                        (1024, 32000, 2048), (768, 16384, 1000), (1000, 1000, 1000), (800, 1000, 1200), (1000, 3000, 1000),
                        (2000, 1000, 1000), (1280, 3000, 1000), (768, 2048, 2048), (1280, 1280, 2048)]:
            a = torch.randn(m, k, dtype=dtype, device="cuda")
            b = torch.randn(k, n, dtype=dtype, device="cuda")
            poison(m * n, dtype)
            check(torch.ops.myns.matmul(a, b), a, b, kind)
            g = torch.randn(m, n, dtype=dtype, device="cuda")
            check(torch.ops.myns.matmul(g, b.t()), g, b.t(), kind)
            check(torch.ops.myns.matmul(a.t(), g), a.t(), g, kind)
    finally:
        set_tf32(old)


@cuda
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9, reason="compute capability 9.x")
def test_float32_auto_takes_fp64_tensor_cores(kernel_override):
    """TF32 off, products that fill the SMs: the automatic choice is the FP64
    tensor-core kernel, whose float64 sums meet a bound no float32
    accumulation would (checked in every layout the backward uses)."""
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(False)
    try:
        torch.manual_seed(5)
        for m, k, n in [(2048, 2048, 2048), (4100, 1000, 4000), (1000, 4095, 2048), (1024, 8192, 2048)]:
            a = torch.randn(m, k, device="cuda")
            b = torch.randn(k, n, device="cuda")
            poison(m * n, torch.float32)
            check(torch.ops.myns.matmul(a, b), a, b, "f32x")
            g = torch.randn(m, n, device="cuda")
            check(torch.ops.myns.matmul(g, b.t()), g, b.t(), "f32x")
            check(torch.ops.myns.matmul(a.t(), g), a.t(), g, "f32x")
        # The bound is not vacuous: the correctly rounded product meets it,
        # the CUDA-core kernel's float32 sums do not.
        a, b = torch.randn(2048, 2048, device="cuda"), torch.randn(2048, 2048, device="cuda")
        assert not bound_violations((a.double() @ b.double()).float(), a, b, "f32x")[0].any()
        kernel_override("MYNS_MATMUL_KERNEL", "256")
        assert bound_violations(torch.ops.myns.matmul(a, b), a, b, "f32x")[0].any()
    finally:
        set_tf32(old)


@cuda
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9, reason="compute capability 9.x")
def test_float32_auto_splits_the_fp64_tensor_cores_over_k(kernel_override):
    """TF32 off, products whose tiles would leave most SMs idle (M = 128 or
    256 against 4096 x 4096, 1024^3): the automatic choice is the FP64
    tensor-core kernel in K ranges. Each range's float64 sum is exact on
    these integers, where any float32 accumulation loses them: every 32 of K
    hold 2^25, 30 small integers and -2^25, and 2^25 + 1 is not a float32.
    So the result is exact, and the CUDA-core kernel's (forced `256`) is
    not."""
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(False)
    try:
        torch.manual_seed(6)
        for m, k, n in [(128, 4096, 4096), (256, 4096, 4096), (1024, 1024, 1024)]:
            b = torch.randint(-8, 9, (k, n), device="cuda").float()
            b[0::32], b[31::32] = 2.0**25, -(2.0**25)
            a = torch.ones(m, k, device="cuda")
            want = (a.double() @ b.double()).float()
            for x, y, exact in [(a, b, want), (b.t(), a.t(), want.t())]:
                poison(m * n, torch.float32)
                got = torch.ops.myns.matmul(x, y)
                wrong = got != exact
                assert not wrong.any(), f"{m}x{k}x{n} {x.stride()} {y.stride()}: {int(wrong.sum())} of {got.numel()} wrong"
        kernel_override("MYNS_MATMUL_KERNEL", "256")
        assert (torch.ops.myns.matmul(a, b) != want).any()
    finally:
        set_tf32(old)


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16", "f32", "tf32"])
@pytest.mark.parametrize("variant", ["auto", "skinny_tma", "skinny_tma/2", "skinny_tma/4", "skinny_tma16", "skinny_tma8", "skinny_tma8/2", "skinny_tma4", "skinny"])
def test_decode_streaming_and_register_builds(kind, variant, kernel_override):
    """Decode (M <= 16) on the skinny kernel's two builds: the TMA-streamed
    one (`auto` from 16 column strips on, K split over 2 or 4 blocks below
    53 strips or where K is long; float32 at M = 1, at M = 9-16 with K
    split in two, or from a strip per SM; `/2`, `/4`: K split over a
    cluster, ranges of whole stages, the last short or empty; `16`, `8`,
    `4`: on that ring, which wraps many times over K = 4096) and the
    register one, both weight layouts, x rows past M and K, N past a stage
    or strip, and batches. `auto` also takes the automatic splits: 17
    strips (the last partial) in 4, 32 in 2, 56 in 2 with a short last
    range. TF32: the streaming build multiplies on the tensor cores (mma,
    operands rounded by the TMA loads), the register build stays exact.
    24 and 32 rows: the streaming build's 4 m blocks, 40 and 64 its 8
    (16-bit types and TF32; float32 with TF32 off, the register build and
    the 16-stage ring at 8 m blocks leave them to the tile kernels); `auto`
    also streams them against 5 and 8 strips at long K, K split over
    clusters of 8."""
    if NO_WG:
        pytest.skip("MYNS_MATMUL_KERNEL=nowg")
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    old = torch.backends.cuda.matmul.allow_tf32
    set_tf32(kind == "tf32")
    try:
        decode_cases(kind, variant)
    finally:
        set_tf32(old)


def decode_cases(kind, variant):
    dtype = DT[kind]
    torch.manual_seed(11)
    r = lambda *s: torch.randn(*s, dtype=dtype, device="cuda")  # noqa: E731
    for m in [1, 5, 9, 16, 24, 32, 40, 64]:
        shapes = [(4096, 4096), (1000, 4104), (72, 8192), (4160, 64)]
        # (2048, 8200): one wave of 64 x 128 tiles at 40 and 64 rows (plan.rs `wgh_wave`), N past a tile.
        # (4096, 4096) and (2048, 1040) at 40 and 64 rows, 16-bit: 64 x 64 tiles in two K ranges of a
        # cluster (`wgh_k_cluster`); (4096, 1000): 16 such tiles (the last partial) in four.
        # (8192, 512), (16384, 300): 17 to 64 rows on 8 and 5 strips (the last partial), the
        # streaming build in clusters of 8 (`few_strips_long_k`). (2048, 17000) at 24 to 64 rows:
        # one wave of 64 x 144 tiles with nn.Linear's weights (`wgh_wave`), N past a tile.
        # (2048, 6000) at 40 and 64 rows: one wave of 64 x 64 tiles; (2048, 28700): 225 tiles of
        # 64 x 128, the last partial.
        for k, n in shapes + ([(2048, 1040), (8192, 2048), (9000, 3584), (2048, 8200), (4096, 1000), (8192, 512), (16384, 300), (2048, 17000), (2048, 6000), (2048, 28700)] if variant == "auto" else []):
            x = r(m, k)
            for w in [r(k, n), r(n, k).t()]:  # N-major, then nn.Linear's K-major
                poison(m * n, dtype)
                try:
                    check(torch.ops.myns.matmul(x, w), x, w, kind)
                except AssertionError as e:
                    raise AssertionError(f"{variant} {m}x{k}x{n} strides {w.stride()}: {e}") from None
    x, w = r(3, 7, 1000), r(3, 1000, 4096)  # 3 x 64 strips
    check(torch.ops.myns.bmm(x, w), x, w, kind)
    x, w = r(3, 16, 520), r(3, 4096, 520).transpose(1, 2)
    check(torch.ops.myns.bmm(x, w), x, w, kind)
    # Broadcast operands (stride 0 along the batch, or along x's rows).
    x, w = r(1, 5, 1000).expand(2, 5, 1000), r(1, 1000, 4096).expand(2, 1000, 4096)
    check(torch.ops.myns.bmm(x, w), x, w, kind)
    x = r(1, 1000).expand(4, 1000)
    check(torch.ops.myns.matmul(x, w[0]), x, w[0], kind)
    # (The accumulating epilogue: `skinny_tma+acc` in ACC_VARIANTS.)


def check_both_weights(x, n, kind, label=""):
    """x @ W^T with nn.Linear's [n, K] weight, then x @ W with a row-major
    [K, n] one, each checked (errors name the label, shape and strides)."""
    m, k = x.shape
    for w in [torch.randn(n, k, dtype=x.dtype, device="cuda").t(), torch.randn(k, n, dtype=x.dtype, device="cuda")]:
        poison(m * n, x.dtype)
        try:
            check(torch.ops.myns.matmul(x, w), x, w, kind)
        except AssertionError as e:
            raise AssertionError(f"{label}{m}x{k}x{n} strides {w.stride()}: {e}") from None


@cuda
@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_wave_tiles_on_several_rows(kind, kernel_override):
    """The automatic plan's 64 x 144 tiles on two to four rows of them
    (plan.rs `wgh_wave`: one wave 90% full or more, nn.Linear's weights):
    96 x 9216 and 128 x 9000 (two rows), 130 x 6000 (three, the last of 2
    rows), 250 x 4600 (four, N past a tile); 64 x 64 tiles on one row (48 x
    6000); one wave of 128 x 64 tiles on two rows of them (`wg64_wave`: 256
    x 4096, 220 x 3400). The N-major weight takes other plans (96 x 9216:
    128 x 128 tiles): checked too."""
    kernel_override("MYNS_MATMUL_KERNEL", "auto")
    dtype = DT[kind]
    torch.manual_seed(12)
    for m, k, n in [(96, 2048, 9216), (128, 2048, 9000), (130, 2048, 6000), (250, 2048, 4600), (48, 2048, 6000), (256, 2048, 4096), (220, 2048, 3400)]:
        check_both_weights(torch.randn(m, k, dtype=dtype, device="cuda"), n, kind)


@cuda
@pytest.mark.skipif(NO_WG, reason="MYNS_MATMUL_KERNEL=nowg")
@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_wide_tile_on_llm_shapes(kind, kernel_override):
    """The 128 x 320 tile (`wg320`: two wgmmas a k-step, B's K-major tile in
    two TMA boxes) on products of many tiles, single and in pairs: 512 x
    3072 x 9216 (116 tiles, the last column 256 wide), 1024 x 4096 x 5120
    (two waves: the automatic plan's through the model), 1000 x 4096 x 4000
    (N past a tile), a batch of two; both B layouts, and accumulating."""
    dtype = DT[kind]
    torch.manual_seed(14)
    for variant in ["wg320", "wg320c2", "auto"]:  # (auto: plan.rs `wg320_wave` at 512 x 3072 x 9216)
        kernel_override("MYNS_MATMUL_KERNEL", variant)
        for bs, m, k, n in [(1, 512, 3072, 9216), (1, 1024, 4096, 5120), (1, 1000, 4096, 4000), (2, 300, 1000, 1300)]:
            a = torch.randn(bs, m, k, dtype=dtype, device="cuda")
            for b in [torch.randn(bs, k, n, dtype=dtype, device="cuda"), torch.randn(bs, n, k, dtype=dtype, device="cuda").transpose(1, 2)]:
                poison(bs * m * n, dtype)
                out = torch.ops.myns.bmm(a, b) if bs > 1 else torch.ops.myns.matmul(a[0], b[0]).unsqueeze(0)
                try:
                    check(out, a, b, kind)
                except AssertionError as e:
                    raise AssertionError(f"{variant} {bs}x{m}x{k}x{n} strides {b.stride()}: {e}") from None
    kernel_override("MYNS_MATMUL_KERNEL", "wg320+acc")
    a, b = torch.randn(512, 3072, dtype=dtype, device="cuda"), torch.randn(9216, 3072, dtype=dtype, device="cuda").t()
    check_twice(torch.ops.myns.matmul(a, b), a, b, kind)


@cuda
@pytest.mark.skipif(NO_WG, reason="MYNS_MATMUL_KERNEL=nowg")
@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_one_wave_widths_on_llm_shapes(kind, kernel_override):
    """The cooperative widths of one wave (`wg96` to `wg176`: B K-major;
    all but 96 stage their output in TMA boxes 16 columns wide, 144 to 176
    in rounds; 96 stores from registers) on nn.Linear products where the
    plan takes them (plan.rs `wg_waves`: 128 tiles each, or 128 blocks of
    two K ranges at 256 x 18944 x 3584 and 224 x 8192 x 3072), forced and
    automatic, with nn.Linear's weight and a row-major one (which they do
    not read: the plan falls back); a last column of tiles partly past N, a
    row of tiles partly past M, split K, pairs, and accumulating."""
    dtype = DT[kind]
    torch.manual_seed(15)
    cases = [("wg144", 256, 3072, 9216), ("wg96", 256, 4096, 6144), ("wg112", 512, 18944, 3584), ("wg160", 256, 8192, 10240), ("wg176", 256, 4096, 11008), ("wg144", 500, 3584, 4600), ("wg112/2", 256, 18944, 3584), ("wg96/2", 224, 8192, 3072)]
    for width, m, k, n in cases:
        for variant in [width, "auto"] + (["wg144/3", "wg144c2"] if m == 500 else []):
            kernel_override("MYNS_MATMUL_KERNEL", variant)
            check_both_weights(torch.randn(m, k, dtype=dtype, device="cuda"), n, kind, f"{variant} ")
    kernel_override("MYNS_MATMUL_KERNEL", "wg176+acc")
    a, b = torch.randn(256, 4096, dtype=dtype, device="cuda"), torch.randn(11008, 4096, dtype=dtype, device="cuda").t()
    check_twice(torch.ops.myns.matmul(a, b), a, b, kind)


@cuda
def test_tf32_setting_is_read_at_call_time(kernel_override):
    """allow_tf32 off: the float32 bound holds (which TF32 would break); on:
    the TF32 bound holds and the result differs from float32's."""
    kernel_override("MYNS_MATMUL_KERNEL", "auto")
    torch.manual_seed(5)
    a = torch.randn(256, 512, device="cuda")
    b = torch.randn(512, 256, device="cuda")
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        set_tf32(True)
        out_tf32 = myns.matmul(a, b)
        set_tf32(False)
        out_f32 = myns.matmul(a, b)
    finally:
        set_tf32(old)
    check(out_f32, a, b, "f32")
    check(out_tf32, a, b, "tf32")
    assert bound_violations(out_tf32, a, b, "f32")[0].any()


def assert_tf32_product_is(a, b, want):
    """Every element of myns.matmul(a, b) under TF32 is exactly `want`."""
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        set_tf32(True)
        out = myns.matmul(a, b)
    finally:
        set_tf32(old)
    wrong = out != want
    assert not wrong.any(), f"{int(wrong.sum())} of {out.numel()} outputs wrong, e.g. {out[wrong][0].item()!r}, want {want!r}"


@cuda
@pytest.mark.parametrize("layout", ["a K-contiguous, b N-contiguous", "a M-contiguous, b N-contiguous", "a K-contiguous, b K-contiguous", "a M-contiguous, b K-contiguous"])
@pytest.mark.parametrize("x_in", ["a", "b"])
@pytest.mark.parametrize("variant", ["auto", "wgr", "wgr64/2", "wgrh128", "wg", "128", "64/3"])
@pytest.mark.parametrize("x,want", [(1 + 3 * 2.0**-12, 1 + 2.0**-10), (1 + 2.0**-11, 1.0)], ids=["above half", "tie"])
def test_tf32_rounds_both_operands_to_nearest(kernel_override, variant, x_in, layout, x, want):
    """TF32 rounds each operand to nearest, ties to even, as cuBLAS does, not
    toward zero as the tensor cores would on their own: with K = 64 terms
    x * 2^-6, x = 1 + 3 * 2^-12 (between the TF32 neighbours 1 and
    1 + 2^-10, nearer the upper), every output is exactly 1 + 2^-10;
    truncating x gives 1. The tie x = 1 + 2^-11 goes to the even 1 (ties
    away from zero would give 1 + 2^-10): every path must agree, or a
    compiled graph's gradients differ from eager ones. The general TF32
    bound would let one operand's truncation pass. On the Hopper kernels
    the TMA loads round (operands read in place, or their K-major copies:
    an M-contiguous a, and b on the K-major kernel `wg` unless it is
    K-contiguous); mma.sync rounds in registers."""
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    y = 2.0**-6
    a = torch.full((256, 64), x if x_in == "a" else y, device="cuda")
    b = torch.full((64, 320), y if x_in == "a" else x, device="cuda")
    if layout.startswith("a M"):
        a = a.t().contiguous().t()
    if layout.endswith("b K-contiguous"):
        b = b.t().contiguous().t()
    assert_tf32_product_is(a, b, want)


@cuda
@pytest.mark.parametrize("weights", ["K-major", "N-major"])
@pytest.mark.parametrize("x_in", ["x", "weights"])
@pytest.mark.parametrize("variant", ["auto", "skinny_tma/2", "skinny_tma4"])
@pytest.mark.parametrize("x,want", [(1 + 3 * 2.0**-12, 1 + 2.0**-10), (1 + 2.0**-11, 1.0)], ids=["above half", "tie"])
def test_tf32_decode_rounds_both_operands_to_nearest(kernel_override, variant, x_in, weights, x, want):
    """The streaming decode build under TF32 (16 rows against 1024 columns:
    mma on the tensor cores) rounds as the product kernels do (see
    test_tf32_rounds_both_operands_to_nearest): its tensor maps round x and
    the weights to nearest, ties to even. Exact float32 would give x itself,
    truncation 1 (K = 256 terms x * 2^-8: past the tiny products, which
    run exact on the generic kernel)."""
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    y = 2.0**-8
    a = torch.full((16, 256), x if x_in == "x" else y, device="cuda")
    b = torch.full((256, 1024), y if x_in == "x" else x, device="cuda")
    if weights == "K-major":
        b = b.t().contiguous().t()
    assert_tf32_product_is(a, b, want)


@cuda
def test_mixed_tf32_apis_raise_instead_of_aborting():
    """PyTorch raises when the legacy and new TF32 settings disagree; myns
    must raise too (an exception crossing the C++/Rust boundary would abort)."""
    m = torch.backends.cuda.matmul
    if not hasattr(m, "fp32_precision"):
        pytest.skip("no fp32_precision API in this torch")
    a = torch.randn(64, 64, device="cuda")
    try:
        m.fp32_precision = "tf32"
        try:
            torch._C._get_cublas_allow_tf32()
        except RuntimeError:
            with pytest.raises(RuntimeError):
                myns.matmul(a, a)
        else:
            myns.matmul(a, a)
    finally:
        m.fp32_precision = "ieee"
        m.allow_tf32 = False


@cuda
@pytest.mark.parametrize("variant", ["16/4", "auto", "skinny/4"])
def test_in_cuda_graph(variant, kernel_override):
    """Split-K workspaces and staging copies come from PyTorch's allocator,
    cluster launches capture: a graph replays correctly on new inputs."""
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    a = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1024 * 384 + 1, device="cuda", dtype=torch.bfloat16)[1:].view(1024, 384)  # misaligned start: staged
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        myns.matmul(a, b)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = myns.matmul(a, b)
    a.copy_(torch.randn_like(a))
    g.replay()
    torch.cuda.synchronize()
    check(out, a, b, "bf16")


def sanitize_sweep(only_wg=False, kinds=None):
    """A few shapes per variant, for compute-sanitizer (slow under it);
    `only_wg`: the Hopper variants alone (for racecheck, slower); `kinds`:
    these kinds alone (e.g. ["f32"])."""
    count = 0
    shapes = [(7, 13, 5), (129, 72, 257), (16, 1000, 300)]
    for kind, variants in VARIANTS.items():
        if kinds and kind not in kinds:
            continue
        set_tf32(kind == "tf32")
        for v in variants:
            if NO_WG and v in HOPPER or only_wg and v not in HOPPER:
                continue
            myns.set_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG and v == "auto" else v)
            matmul_sweep(kind, shapes, ["nn", "nt", "tn", "tt", "uv"])
            count += len(shapes) * 5
            a, b = make3(3, 65, 40, DT[kind], "n"), make3(3, 40, 70, DT[kind], "t")
            check(torch.ops.myns.bmm(a, b), a, b, kind)
            count += 1
    torch.cuda.synchronize()
    print(f"sanitize sweep: {count} products checked")


if __name__ == "__main__" and "--sanitize" in sys.argv:
    # --kinds=f32,tf32: those kinds' variants alone.
    kinds = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--kinds=")), None)
    sanitize_sweep(only_wg="--only-wg" in sys.argv, kinds=kinds)
