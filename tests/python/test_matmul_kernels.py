"""Every CUDA kernel variant of myns::matmul / myns::bmm against a float64
reference: fresh random data, odd shapes that cross tile edges, every layout
(a and b row-major or transposed, rows padded so the fast kernels take them,
or unpadded so the generic one does), split-K, the skinny tiles, the Hopper
kernel. `MYNS_MATMUL_KERNEL` forces a variant (see src/ops/matmul.rs).

Checks per case: ||out - ref|| / ||ref|| under the dtype's bound, and every
element within an error bound derived from K and the operands' magnitudes
(so a single unwritten or garbage element fails). The output buffer is
poisoned with NaN first: the op allocates through PyTorch's caching
allocator, which hands the same block back for the same size.

`python tests/python/test_matmul_kernels.py --sanitize [--only-wg]` runs a
short sweep of every variant (or the Hopper kernel's alone), meant for
`compute-sanitizer`.
"""

import os
import subprocess
import sys
import zlib

import pytest
import torch

import myns  # noqa: F401
from conftest import rel_err

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

REL = {"f64": 1e-12, "f32": 1e-5, "tf32": 1e-3, "f16": 2e-3, "bf16": 1e-2}
DT = {"f64": torch.float64, "f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
# Unit roundoff of the output dtype, of the kernel's inputs (tf32 keeps 10
# mantissa bits of a float32 operand, rounded to nearest by every kernel: the
# Hopper kernel's tensor cores would truncate, so its operands are rounded
# copies; truncation breaks this bound), and of its accumulator.
U_OUT = {"f64": 2.0**-53, "f32": 2.0**-24, "tf32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
U_IN = {"f64": 0.0, "f32": 0.0, "tf32": 2.0**-11, "f16": 0.0, "bf16": 0.0}
# Half the spacing of the output format's subnormals: a correctly rounded tiny
# result (e.g. a K=1 product below 6e-5 in float16) is only that close.
U_SUB = {"f64": 2.0**-1075, "f32": 2.0**-150, "tf32": 2.0**-150, "f16": 2.0**-25, "bf16": 2.0**-134}
U_ACC = {"f64": 2.0**-53, "f32": 2.0**-24, "tf32": 2.0**-24, "f16": 2.0**-24, "bf16": 2.0**-24}

# Forced variants per dtype: tile names of src/ops/matmul.rs (`/s`: split-K).
VARIANTS = {
    "f16": ["auto", "generic", "256", "128", "64", "16", "64/3", "16/5", "wg", "wg/3", "wg128", "wg64/2", "auto+wg"],
    "bf16": ["auto", "generic", "256", "128", "64", "16", "128/2", "16/5", "wg", "wg/3", "wg256", "wg128/3", "wg64", "auto+wg"],
    "tf32": ["auto", "256", "128", "64", "16", "64/3", "16/5", "wg", "wg/3", "wg128", "wg64/2", "wgr", "wgr/3", "wgr256", "wgr128/2", "wgr64"],
    "f32": ["auto", "generic", "128", "64", "16", "128/3", "64/4", "16/5"],
    "f64": ["auto"],
}
# (M, K, N): tiny, odd, tile edges +-1, K not a multiple of any k-tile, skinny.
SHAPES = [
    (1, 1, 1),
    (7, 13, 5),
    (127, 129, 255),
    (129, 64, 257),
    (255, 127, 129),
    (16, 1000, 300),
    (300, 200, 9),
    (1, 1031, 263),
    (1000, 72, 1003),
    (1100, 64, 1030),  # >= 1024 rows: forced TF32 on the Hopper kernel copies b (or a) to K-major
]
LAYOUTS = ["nn", "nt", "tn", "tt"]  # a / b: n = row-major, t = transposed view


def make(rows, cols, dtype, transposed, pad):
    """A [rows, cols] operand: a view of row-major storage (its rows padded to
    a multiple of 8 elements when `pad`), transposed storage when asked."""
    if transposed:
        return make(cols, rows, dtype, False, pad).t()
    width = -(-cols // 8) * 8 if pad else cols
    return torch.randn(rows, width, dtype=dtype, device="cuda")[:, :cols]


def make3(bsz, rows, cols, dtype, transposed):
    """A [bsz, rows, cols] operand with padded rows, optionally a transposed view."""
    if transposed:
        return make3(bsz, cols, rows, dtype, False).transpose(1, 2)
    width = -(-cols // 8) * 8
    return torch.randn(bsz, rows, width, dtype=dtype, device="cuda")[:, :, :cols]


def poison(numel, dtype):
    """Leave a NaN-filled block of this size in the caching allocator."""
    t = torch.full((max(numel, 1),), float("nan"), dtype=dtype, device="cuda")
    del t


def check(out, a, b, kind):
    """Relative error and an elementwise bound against the float64 product."""
    ref = a.double() @ b.double()
    assert out.shape == ref.shape and out.dtype == DT[kind] and out.is_contiguous()
    assert torch.isfinite(out).all(), "non-finite output (unwritten or garbage elements)"
    if ref.numel() == 0:
        return
    k = a.shape[-1]
    mag = a.double().abs() @ b.double().abs()
    # Each product of two inputs off by U_IN: off by 2 U_IN + U_IN^2.
    u_prod = 2 * U_IN[kind] + U_IN[kind] ** 2
    bound = mag * (u_prod + 2 * k * U_ACC[kind]) + ref.abs() * U_OUT[kind] * 1.01 + U_SUB[kind] + 1e-30
    diff = (out.double() - ref).abs()
    bad = diff > bound
    assert not bad.any(), f"{int(bad.sum())} elements off, first at {bad.nonzero()[0].tolist()}"
    if ref.norm() > 0:
        rel = REL[kind]
        assert rel_err(out, ref) <= rel, f"relative error {rel_err(out, ref):.2e} > {rel:.1e}"


# `MYNS_MATMUL_KERNEL=nowg` in the environment: test without the Hopper kernel.
NO_WG = os.environ.get("MYNS_MATMUL_KERNEL") == "nowg"
# Variants forcing the Hopper (wgmma/TMA/mbarrier) kernel: a broken barrier
# protocol there hangs the GPU rather than failing, so these run in a child
# process with a time limit. (The automatic choice also takes that kernel for
# large half-type problems, in-process, since it passed these tests.)
ISOLATED = {v for vs in VARIANTS.values() for v in vs if v.startswith("wg") or v == "auto+wg"}
HERE = os.path.dirname(os.path.abspath(__file__))


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on


def run_isolated(fn_name, kind, variant, timeout=120):
    code = (
        f"import sys; sys.path.insert(0, {HERE!r}); import test_matmul_kernels as t; "
        f"t.set_tf32({kind == 'tf32'}); t.{fn_name}({kind!r}); print('child ok')"
    )
    env = dict(os.environ, MYNS_MATMUL_KERNEL=variant)
    try:
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind} {variant}: no result within {timeout} s (a hung kernel?)")
    assert r.returncode == 0 and "child ok" in r.stdout, f"{kind} {variant}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


@pytest.fixture
def kind_env(request, kernel_override):
    """Sets TF32 and the forced variant; restores both."""
    kind, variant = request.param
    if NO_WG:
        if variant in ISOLATED:
            pytest.skip("MYNS_MATMUL_KERNEL=nowg")
        variant = "nowg" if variant == "auto" else variant
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    kernel_override("MYNS_MATMUL_KERNEL", variant)
    yield kind, variant
    torch.backends.cuda.matmul.allow_tf32 = old


CASES = [(k, v) for k, vs in VARIANTS.items() for v in vs]


def matmul_sweep(kind):
    """Every shape and layout with whatever MYNS_MATMUL_KERNEL says."""
    dtype = DT[kind]
    # A fixed seed per kind (Python's str hash changes from run to run), so
    # a failure reproduces.
    torch.manual_seed(zlib.crc32(kind.encode()))
    for m, k, n in SHAPES:
        for lay in LAYOUTS:
            for pad in (True, False) if lay == "nn" else (True,):
                a = make(m, k, dtype, lay[0] == "t", pad)
                b = make(k, n, dtype, lay[1] == "t", pad)
                poison(m * n, dtype)
                out = torch.ops.myns.matmul(a, b)
                try:
                    check(out, a, b, kind)
                except AssertionError as e:
                    raise AssertionError(f"{kind} {m}x{k}x{n} {lay} pad={pad}: {e}") from None


def bmm_sweep(kind):
    dtype = DT[kind]
    for bsz, m, k, n in [(3, 129, 72, 257), (2, 1, 300, 130), (5, 33, 17, 9), (1, 200, 64, 256), (3, 130, 1100, 260)]:
        for lay in LAYOUTS:
            a = make3(bsz, m, k, dtype, lay[0] == "t")
            b = make3(bsz, k, n, dtype, lay[1] == "t")
            poison(bsz * m * n, dtype)
            out = torch.ops.myns.bmm(a, b)
            try:
                check(out, a, b, kind)
            except AssertionError as e:
                raise AssertionError(f"bmm {kind} {bsz}x{m}x{k}x{n} {lay}: {e}") from None


@pytest.mark.parametrize("kind_env", CASES, indirect=True, ids=[f"{k}-{v}" for k, v in CASES])
def test_matmul_variants(kind_env):
    kind, variant = kind_env
    if variant in ISOLATED:
        run_isolated("matmul_sweep", kind, variant)
    else:
        matmul_sweep(kind)


@pytest.mark.parametrize(
    "kind_env",
    [("bf16", "auto"), ("bf16", "wg"), ("bf16", "wg/3"), ("f16", "auto+wg"), ("f16", "128"), ("f16", "16/3"), ("tf32", "auto"), ("tf32", "wg"), ("tf32", "wgr"), ("tf32", "wgr64/3"), ("f32", "auto"), ("f32", "16/2"), ("f64", "auto")],
    indirect=True,
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def test_bmm_variants(kind_env):
    kind, variant = kind_env
    if variant in ISOLATED:
        run_isolated("bmm_sweep", kind, variant)
    else:
        bmm_sweep(kind)


@pytest.mark.parametrize("kind", ["bf16", "f16", "tf32", "f32"])
def test_large_and_llm_shapes(kind, kernel_override):
    """The automatic choice on shapes the benchmark times (tile edges included)."""
    kernel_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG else "auto")
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    try:
        dtype = DT[kind]
        for m, k, n in [(1, 4096, 14336), (16, 14336, 4096), (128, 4096, 4096), (2048, 2048, 2048), (4100, 1000, 4000)]:
            a = torch.randn(m, k, dtype=dtype, device="cuda")
            b = torch.randn(k, n, dtype=dtype, device="cuda")
            poison(m * n, dtype)
            check(torch.ops.myns.matmul(a, b), a, b, kind)
            # The backward's layouts: g @ b^T and a^T @ g.
            g = torch.randn(m, n, dtype=dtype, device="cuda")
            check(torch.ops.myns.matmul(g, b.t()), g, b.t(), kind)
            check(torch.ops.myns.matmul(a.t(), g), a.t(), g, kind)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def test_tf32_setting_is_read_at_call_time(kernel_override):
    """allow_tf32 on: TF32 rounding shows; off: full float32 precision."""
    kernel_override("MYNS_MATMUL_KERNEL", "auto")
    a = torch.randn(256, 512, device="cuda")
    b = torch.randn(512, 256, device="cuda")
    ref = a.double() @ b.double()
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        e_tf32 = rel_err(myns.matmul(a, b), ref)
        torch.backends.cuda.matmul.allow_tf32 = False
        e_f32 = rel_err(myns.matmul(a, b), ref)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    assert e_f32 < 1e-5 and 1e-4 < e_tf32 < 1e-3


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


def test_split_k_in_cuda_graph(kernel_override):
    """The split-K workspace comes from PyTorch's allocator, so capture works."""
    kernel_override("MYNS_MATMUL_KERNEL", "16/4")
    a = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1024, 384, device="cuda", dtype=torch.bfloat16)
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


def sanitize_sweep(only_wg=False):
    """A few shapes per variant, for compute-sanitizer (slow under it);
    `only_wg`: the Hopper kernel's variants alone (for racecheck, slower)."""
    count = 0
    for kind, variants in VARIANTS.items():
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        for v in variants:
            if NO_WG and v in ISOLATED or only_wg and v not in ISOLATED:
                continue
            myns.set_override("MYNS_MATMUL_KERNEL", "nowg" if NO_WG and v == "auto" else v)
            for m, k, n in [(7, 13, 5), (129, 72, 257), (16, 1000, 300)]:
                for lay in LAYOUTS:
                    a = make(m, k, DT[kind], lay[0] == "t", True)
                    b = make(k, n, DT[kind], lay[1] == "t", True)
                    check(torch.ops.myns.matmul(a, b), a, b, kind)
                    count += 1
            bsz = 3
            a, b = make3(bsz, 65, 40, DT[kind], False), make3(bsz, 40, 70, DT[kind], True)
            check(torch.ops.myns.bmm(a, b), a, b, kind)
            count += 1
    torch.cuda.synchronize()
    print(f"sanitize sweep: {count} products checked")


if __name__ == "__main__" and "--sanitize" in sys.argv:
    sanitize_sweep(only_wg="--only-wg" in sys.argv)
