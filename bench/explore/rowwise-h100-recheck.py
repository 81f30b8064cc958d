"""Run 33 (bench/results/gpu-runs-2026-11-21.md): re-measures the shapes below 1.0x in run 32 (bench_rowwise), 5
interleaved rounds of do_bench each for myns (auto, and general for the long
shapes) and torch.compile; median of rounds."""
import os, sys, json, statistics, torch, torch.nn.functional as F
from triton.testing import do_bench
sys.path.insert(0, "python_loader")
import myns
EPS = 1e-6
def rms(x, w): return F.rms_norm(x, (x.shape[-1],), w, EPS)
def fused_ref(x, r, w):
    r2 = r + x
    return F.rms_norm(r2, (x.shape[-1],), w, EPS), r2
def swiglu(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]
out = []
for op, rows, h in [("rms_norm", 32768, 512), ("rms_norm", 1024, 8192), ("rms_norm", 1024, 16384), ("rms_norm", 1, 8192),
                    ("fused_add_rms_norm", 1, 512), ("fused_add_rms_norm", 64, 512), ("scale", 64, 512),
                    ("silu_and_mul", 64, 2048), ("silu_and_mul", 1024, 8192), ("silu_and_mul", 64, 16384), ("rms_norm", 8192, 512)]:
    torch._dynamo.reset()
    x = torch.randn(rows, h, device="cuda", dtype=torch.bfloat16); w = torch.randn(h, device="cuda", dtype=torch.bfloat16); r = torch.randn_like(x)
    mine, ref = {
        "rms_norm": (lambda: myns.rms_norm(x, w, EPS), rms),
        "fused_add_rms_norm": (lambda: myns.fused_add_rms_norm(x, r, w, EPS), fused_ref),
        "scale": (lambda: myns.scale(x, 0.5), lambda x: x * 0.5),
        "silu_and_mul": (lambda: myns.silu_and_mul(x), swiglu),
    }[op]
    c = torch.compile(ref, dynamic=False)
    comp = {"rms_norm": lambda: c(x, w), "fused_add_rms_norm": lambda: c(x, r, w)}.get(op, lambda: c(x))
    builds = ["auto", "general"] if op in ("rms_norm", "fused_add_rms_norm") and rows > 1 else ["auto"]
    t = {k: [] for k in builds + ["compiled"]}
    for _ in range(5):
        t["compiled"].append(do_bench(comp, warmup=10, rep=40, return_mode="median") * 1e3)
        for b in builds:
            os.environ["MYNS_ROW_KERNEL"] = b
            t[b].append(do_bench(mine, warmup=10, rep=40, return_mode="median") * 1e3)
    os.environ.pop("MYNS_ROW_KERNEL", None)
    med = {k: round(statistics.median(v), 2) for k, v in t.items()}
    row = {"op": op, "rows": rows, "hidden": h, "us_median_of_5": med, "rounds_us": t,
           "vs_compiled": {b: round(med["compiled"] / med[b], 3) for b in builds}}
    out.append(row)
    print(op, f"{rows}x{h}", med, row["vs_compiled"], flush=True)
json.dump(out, open(os.path.join(os.environ["OUT"], "recheck.json"), "w"), indent=1)
