"""Runs 28-29 (bench/results/gpu-runs-2026-11-21.md). Exploration (not a shipped benchmark), on the H100:
OUT=<dir> MYNS_LIBRARY=.gpu/libmyns.so python3 <this file> (writes
rowwise-explore.json). For the forward row reductions (rms_norm,
fused_add_rms_norm, softmax) over the bench_rowwise.py grid: microseconds of
every forced build (`MYNS_ROW_KERNEL`: register-resident r1 / r2, general) and
of the automatic choice, against torch.compile of the same computation.
triton's do_bench (L2 flushed before each call), median, best of two
interleaved rounds; each build's output is checked against float32 torch.
For launch-bound shapes also the wall time per call of back-to-back calls
(host launch cost included)."""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, "python_loader")
import myns  # noqa: E402

EPS = 1e-6


def bench(fn):
    return do_bench(fn, warmup=10, rep=40, return_mode="median")


def rms(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, EPS)


def fused_ref(x, r, w):
    r2 = r + x
    return F.rms_norm(r2, (x.shape[-1],), w, EPS), r2


def builds(units):
    out = ["auto", "general"]
    if units <= 512:
        out.append(f"general:{(units + 31) // 32 * 32}")
    if units <= 1024:
        out.append("r1")
    if units <= 2048:
        out.append("r2")
    if units <= 64:
        out.append("r2:32:8")
    return out


def loop_us(fn, n=300):
    """Wall microseconds per call over n back-to-back calls (host launch cost
    included), median of 5 rounds."""
    ts = []
    for _ in range(5):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) / n * 1e6)
    return round(sorted(ts)[2], 2)


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30)).item()


results = []
grid = [(r, h) for r in (1, 64, 1024, 8192, 32768) for h in (512, 2048, 8192, 16384)]
cases = [(torch.bfloat16, r, h) for r, h in grid] + [
    (torch.float32, r, h) for r, h in [(1, 2048), (64, 8192), (1024, 2048), (1024, 8192), (8192, 2048), (32768, 512)]
]
for dtype, rows, h in cases:
    torch._dynamo.reset()
    x = torch.randn(rows, h, device="cuda", dtype=dtype)
    w = torch.randn(h, device="cuda", dtype=dtype)
    r = torch.randn_like(x)
    units = h // (16 // x.element_size())
    comp = {
        "rms_norm": torch.compile(rms, dynamic=False),
        "fused_add_rms_norm": torch.compile(fused_ref, dynamic=False),
        "softmax": torch.compile(lambda x: torch.softmax(x, -1), dynamic=False),
    }
    ops = {
        "rms_norm": (lambda: myns.rms_norm(x, w, EPS), lambda: comp["rms_norm"](x, w), lambda: rms(x.float(), w.float())),
        "fused_add_rms_norm": (
            lambda: myns.fused_add_rms_norm(x, r, w, EPS),
            lambda: comp["fused_add_rms_norm"](x, r, w),
            None,
        ),
        "softmax": (lambda: myns.softmax(x, -1), lambda: comp["softmax"](x), lambda: torch.softmax(x.float(), -1)),
    }
    for op, (mine, compiled, ref) in ops.items():
        bs = builds(units)
        row = {"op": op, "dtype": str(dtype).removeprefix("torch."), "rows": rows, "hidden": h, "err": {}}
        for b in bs:  # correctness of each build, before timing
            os.environ["MYNS_ROW_KERNEL"] = b
            if ref is not None:
                row["err"][b] = rel(mine(), ref())
            else:
                xc, rc = x.clone(), r.clone()
                myns.fused_add_rms_norm(xc, rc, w, EPS)
                yr, rr = fused_ref(x.float(), r.float(), w.float())
                row["err"][b] = max(rel(xc, yr), rel(rc, rr))
        times = {b: [] for b in bs + ["compiled"]}
        for _ in range(2):
            times["compiled"].append(bench(compiled) * 1e3)
            for b in bs:
                os.environ["MYNS_ROW_KERNEL"] = b
                times[b].append(bench(mine) * 1e3)
        os.environ.pop("MYNS_ROW_KERNEL", None)
        row["us"] = {b: round(min(t), 2) for b, t in times.items()}
        if rows * h <= 64 * 16384:  # launch-bound: also the wall time per call back to back
            os.environ.pop("MYNS_ROW_KERNEL", None)
            row["loop_us"] = {"myns": loop_us(mine), "compiled": loop_us(compiled)}
        row["vs_compiled"] = {b: round(row["us"]["compiled"] / row["us"][b], 3) for b in bs}
        results.append(row)
        print(op, row["dtype"], f"{rows}x{h}", "compiled %.1f us" % row["us"]["compiled"], row["vs_compiled"],
              "max err %.1e" % max(row["err"].values()), row.get("loop_us", ""), flush=True)

json.dump(results, open(os.path.join(os.environ.get("OUT", "/tmp"), "rowwise-explore.json"), "w"), indent=1)
