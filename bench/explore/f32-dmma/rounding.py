"""Exploration: how far float32 products on the FP64 tensor cores are from
correctly rounded (float64 product rounded once), by variant and K, with
the kernels each call queued (torch.profiler). Run with MYNS_LIBRARY set.

    python3 bench/explore/f32-dmma/rounding.py [CUBIN]
"""

import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python_loader"))
import myns  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False


def ulps(out, a, b):
    ref = a.double() @ b.double()
    cr = ref.float()  # correctly rounded
    ulp = (torch.nextafter(cr.abs(), torch.tensor(float("inf"), device="cuda")) - cr.abs()).double()
    e = (out.double() - ref).abs() / ulp
    return e.max().item(), (out != cr).float().mean().item()


for m, k, n in [(2048, 64, 2048), (2048, 512, 2048), (2048, 2048, 2048), (2048, 8192, 2048), (512, 2048, 512)]:
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    for v in ["x128", "auto", "256"]:
        myns.set_override("MYNS_MATMUL_KERNEL", v)
        out = torch.ops.myns.matmul(a, b)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            torch.ops.myns.matmul(a, b)
            torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
        mx, frac = ulps(out, a, b)
        print(f"{m}x{k}x{n} {v:5s} max {mx:.3f} ulp, not correctly rounded {frac:.4f}  kernels {names}", flush=True)
