"""Bandwidth of the LLM row-wise ops (rms_norm, fused_add_rms_norm,
silu_and_mul, softmax, scale) against eager PyTorch and torch.compile of the
same computation (Inductor's fused kernel), over a grid of rows x hidden.

Bytes counted are those that must be read and written once. For small
problems the time is launch cost, not bandwidth: the table reports
microseconds too, and for problems up to 8 MB moved the wall time per call of
back-to-back calls, host launch cost included.

    python bench/bench_rowwise.py [--quick] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import myns  # noqa: E402

EPS = 1e-6


def timer(device):
    """Median milliseconds of fn(): triton's do_bench on CUDA (L2 flushed
    between runs), wall clock on CPU (smoke runs only)."""
    if device == "cuda":
        from triton.testing import do_bench

        return lambda fn: do_bench(fn, warmup=10, rep=40, return_mode="median")

    def cpu(fn):
        fn()
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return sorted(ts)[len(ts) // 2] * 1e3

    return cpu


def call_us(fn, device, n=200):
    """Wall microseconds per call over n back-to-back calls, host launch cost
    included (what a small problem costs a caller): median of 3 rounds."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    ts = []
    for _ in range(3):
        sync()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        ts.append((time.perf_counter() - t) / n * 1e6)
    return sorted(ts)[1]


# Problems up to this many bytes moved are launch-bound: the benchmark also
# reports their per-call cost back to back.
LAUNCH_BOUND_BYTES = 8 << 20


def cases(rows, hidden, dtype, device):
    """(op name, bytes moved, {impl: fn}) for one shape."""
    x = torch.randn(rows, hidden, device=device, dtype=dtype)
    w = torch.randn(hidden, device=device, dtype=dtype)
    es = x.element_size()
    n = rows * hidden

    def eager_fused(x, r, w):
        r.add_(x)
        x.copy_(F.rms_norm(r, (x.shape[-1],), w, EPS))

    def functional_fused(x, r, w):
        # Same bytes as the in-place op (reads x, r; writes two tensors), and
        # side-steps Inductor's handling of input mutation.
        r2 = r + x
        return F.rms_norm(r2, (x.shape[-1],), w, EPS), r2

    def rms(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)

    def swiglu(x):
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]

    compiled = {
        "rms_norm": torch.compile(rms, dynamic=False),
        "fused": torch.compile(functional_fused, dynamic=False),
        "silu": torch.compile(swiglu, dynamic=False),
        "softmax": torch.compile(lambda x: torch.softmax(x, -1), dynamic=False),
        "scale": torch.compile(lambda x: x * 0.5, dynamic=False),
    }
    r = torch.randn_like(x)
    yield "rms_norm", 2 * n * es + hidden * es, {
        "myns": lambda: myns.rms_norm(x, w, EPS),
        "eager": lambda: rms(x, w),
        "compiled": lambda: compiled["rms_norm"](x, w),
    }
    yield "fused_add_rms_norm", 4 * n * es + hidden * es, {
        "myns": lambda: myns.fused_add_rms_norm(x, r, w, EPS),
        "eager": lambda: eager_fused(x, r, w),
        "compiled": lambda: compiled["fused"](x, r, w),
    }
    yield "silu_and_mul", 3 * n // 2 * es, {
        "myns": lambda: myns.silu_and_mul(x),
        "eager": lambda: swiglu(x),
        "compiled": lambda: compiled["silu"](x),
    }
    yield "softmax", 2 * n * es, {
        "myns": lambda: myns.softmax(x, -1),
        "eager": lambda: torch.softmax(x, -1),
        "compiled": lambda: compiled["softmax"](x),
    }
    yield "scale", 2 * n * es, {
        "myns": lambda: myns.scale(x, 0.5),
        "eager": lambda: x * 0.5,
        "compiled": lambda: compiled["scale"](x),
    }


def run(args) -> dict:
    device = args.device
    bench = timer(device)
    if args.quick:
        grid = [(1, 512), (4096, 4096)] if device == "cuda" else [(4, 512)]
        dtypes = [torch.bfloat16]
    else:
        # Rows 1..32768 by hidden 512..16384, ending with the 16384 x 8192
        # reference shape. Each shape costs five torch.compile runs.
        grid = [(r, h) for r in (1, 64, 1024, 8192, 32768) for h in (512, 2048, 8192, 16384)] + [(16384, 8192)]
        dtypes = [torch.bfloat16, torch.float32]
    rows_out = []
    for dtype in dtypes:
        # float32: the large reference shape only (each shape costs compiles).
        for rows, hidden in grid if dtype == dtypes[0] else grid[-1:]:
            torch._dynamo.reset()
            for op, nbytes, impls in cases(rows, hidden, dtype, device):
                row = {"op": op, "dtype": str(dtype).removeprefix("torch."), "rows": rows, "hidden": hidden, "bytes": nbytes}
                for name, fn in impls.items():
                    ms = bench(fn)
                    row[f"{name}_us"] = ms * 1e3
                    row[f"{name}_tbps"] = nbytes / (ms * 1e-3) / 1e12
                if nbytes <= LAUNCH_BOUND_BYTES:
                    for name, fn in impls.items():
                        row[f"{name}_call_us"] = call_us(fn, device)
                row["vs_compiled"] = row["compiled_us"] / row["myns_us"]
                row["vs_eager"] = row["eager_us"] / row["myns_us"]
                rows_out.append(row)
                print(
                    f"{op:>20} {row['dtype']:>8} {rows:>6}x{hidden:<6} myns {row['myns_us']:8.1f} us "
                    f"{row['myns_tbps']:5.2f} TB/s | eager {row['eager_tbps']:5.2f} | compiled {row['compiled_tbps']:5.2f} "
                    f"| speed-up vs compiled {row['vs_compiled']:4.2f}x"
                    + (f" | per call {row['myns_call_us']:.1f} vs {row['compiled_call_us']:.1f} us" if "myns_call_us" in row else ""),
                    flush=True,
                )
    return {"name": "rowwise", "results": rows_out}


def markdown(result: dict) -> str:
    lines = [
        "GPU time: triton do_bench median, L2 flushed before each call. Per call: wall time of back-to-back "
        f"calls, host launch cost included (problems up to {LAUNCH_BOUND_BYTES >> 20} MB moved).",
        "",
        "| op | dtype | rows x hidden | myns µs | compiled µs | myns TB/s | eager TB/s | compiled TB/s | myns vs compiled "
        "| per call µs: myns / eager / compiled |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["results"]:
        call = (
            f"{r['myns_call_us']:.1f} / {r['eager_call_us']:.1f} / {r['compiled_call_us']:.1f}" if "myns_call_us" in r else ""
        )
        lines.append(
            f"| {r['op']} | {r['dtype']} | {r['rows']}x{r['hidden']} | {r['myns_us']:.1f} | {r['compiled_us']:.1f} | "
            f"{r['myns_tbps']:.2f} | {r['eager_tbps']:.2f} | {r['compiled_tbps']:.2f} | {r['vs_compiled']:.2f}x | {call} |"
        )
    return "\n".join(lines)


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = [r for r in result["results"] if r["dtype"] == "bfloat16"]
    ops = sorted({r["op"] for r in res})
    fig, axes = plt.subplots(1, len(ops), figsize=(4 * len(ops), 3.5), squeeze=False)
    for ax, op in zip(axes[0], ops):
        rs = sorted((r for r in res if r["op"] == op), key=lambda r: r["bytes"])
        xs = [r["bytes"] / 1e6 for r in rs]
        for impl in ("myns", "compiled", "eager"):
            ax.plot(xs, [r[f"{impl}_tbps"] for r in rs], marker="o", label=impl)
        ax.set_xscale("log")
        ax.set_title(f"{op} (bf16)")
        ax.set_xlabel("MB moved")
        ax.set_ylabel("TB/s")
        ax.grid(alpha=0.3)
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=os.environ.get("OUT", os.path.join(os.path.dirname(__file__), "results")))
    args = p.parse_args()
    res = run(args)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "rowwise.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(markdown(res))
    try:
        plot(res, os.path.join(args.out, "rowwise.png"))
    except ImportError:
        print("matplotlib missing: no plot")
