"""A small CUDA workload touching every myns kernel (each dtype, vector and
scalar paths, odd sizes, forward and backward, the row kernels' launch
shapes, the Hopper matmul) for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/sanitize_workload.py

Results are checked against the same ops on the CPU afterwards.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import myns  # noqa: E402
from op_cases import CASES, call, matches  # noqa: E402

assert torch.cuda.is_available()
torch.manual_seed(0)
checked = 0
for name in sorted(myns.op_names()):
    for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
        args = CASES[name].args(dtype, "cuda")
        cpu_args = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
        out = call(name, list(args))
        expected = call(name, cpu_args)
        assert matches(out, expected, dtype), f"{name} {dtype}"
        checked += 1

# Odd sizes (scalar paths, edge tiles) and a misaligned view (scalar path).
for dtype in [torch.float32, torch.bfloat16]:
    x = torch.randn(5, 67, device="cuda", dtype=dtype)
    w = torch.randn(67, device="cuda", dtype=dtype)
    outs = [myns.rms_norm(x, w, 1e-6), myns.softmax(x, -1), myns.scale(x, 2.0), myns.silu_and_mul(x[:, :66])]
    outs.append(myns.matmul(x, x.t()))
    outs.append(myns.matmul(torch.randn(130, 257, device="cuda", dtype=dtype), torch.randn(257, 129, device="cuda", dtype=dtype)))
    xo = torch.randn(1, 4 * 64 + 1, device="cuda", dtype=dtype)[:, 1:]  # offset by one element
    outs += [myns.rms_norm(xo, torch.randn(256, device="cuda", dtype=dtype), 1e-6), myns.softmax(xo, -1)]
    xr = x.clone().requires_grad_()
    wr = w.clone().requires_grad_()
    (myns.rms_norm(xr, wr, 1e-6).sum() + myns.softmax(xr, 0).square().sum() + myns.silu_and_mul(xr[:, :66]).sum()).backward()
    r = torch.randn_like(x)
    myns.fused_add_rms_norm(x, r, w, 1e-6)
    torch.cuda.synchronize()
    checked += len(outs)
# Launch shapes the cases above miss: a warp per row (many short rows), and
# large matmuls (bf16: the Hopper kernel on compute capability 9.0; TF32:
# the mma.sync kernels).
for dtype in [torch.float32, torch.bfloat16]:
    x = torch.randn(300, 256, device="cuda", dtype=dtype)
    w = torch.randn(256, device="cuda", dtype=dtype)
    for got, want in [(myns.rms_norm(x, w, 1e-6), myns.rms_norm(x.cpu(), w.cpu(), 1e-6)), (myns.softmax(x, -1), myns.softmax(x.cpu(), -1))]:
        assert matches([got], [want], dtype), f"row kernels {dtype}"
        checked += 1
# Every build of the forward row reductions (src/rowwise.rs), forced, on a
# partial last block of rows and rows longer than the threads (scalar too).
# (A warp per row covers at most 64 packs at two per thread.)
long_rows, short_rows = [(torch.bfloat16, 1000), (torch.float32, 1001)], [(torch.bfloat16, 496), (torch.float32, 63)]
for build, sizes in [("r1", long_rows), ("r2", long_rows), ("r2:32:8", short_rows), ("general", long_rows), ("general:32:8", long_rows)]:
    myns.set_override("MYNS_ROW_KERNEL", build)
    for dtype, h in sizes:
        x = torch.randn(13, h, device="cuda", dtype=dtype)
        w = torch.randn(h, device="cuda", dtype=dtype)
        r = torch.randn_like(x)
        xc, rc = x.cpu(), r.cpu()
        got = [myns.rms_norm(x, w, 1e-6), myns.softmax(x, -1)]
        want = [myns.rms_norm(xc, w.cpu(), 1e-6), myns.softmax(xc, -1)]
        myns.fused_add_rms_norm(x, r, w, 1e-6)
        myns.fused_add_rms_norm(xc, rc, w.cpu(), 1e-6)
        assert matches(got + [x, r], want + [xc, rc], dtype), f"row build {build} {dtype}"
        checked += 4
myns.set_override("MYNS_ROW_KERNEL", None)
old_tf32 = torch.backends.cuda.matmul.allow_tf32
for dtype, tf32 in [(torch.bfloat16, False), (torch.float32, True)]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a, b = torch.randn(1024, 1024, device="cuda", dtype=dtype), torch.randn(1024, 1024, device="cuda", dtype=dtype)
    ref = a.double() @ b.double()
    assert ((myns.matmul(a, b).double() - ref).norm() / ref.norm()).item() < 1e-2, f"matmul {dtype}"
    checked += 1
torch.backends.cuda.matmul.allow_tf32 = old_tf32
if "bmm" in myns.op_names():
    myns.bmm(torch.randn(3, 33, 17, device="cuda"), torch.randn(3, 17, 9, device="cuda"))
torch.cuda.synchronize()
print(f"sanitize workload ok: {checked} op calls checked")
