"""myns.matmul against torch.matmul (cuBLAS) in the same run: TFLOP/s and the
ratio to cuBLAS for bfloat16, float16, float32 with TF32 off and on, over
square sizes 256..8192 and LLM-shaped problems (M in 1, 16, 128, 4096 with
K, N in 4096 and 14336). Device time per call: median of CUDA-event timings
after warm-up (triton.testing.do_bench, L2 flushed before each call), fresh
random inputs per shape. Also: cold start of a fresh process
(`CUDA_CACHE_DISABLE=1`: load_library plus the first CUDA matmul).

    python bench/bench_matmul.py [--quick] [--sweep] [--wg] [--out DIR]
    python bench/run.py --only matmul [--matmul-sweep]

`--sweep` adds a table of every forced kernel variant (MYNS_MATMUL_KERNEL)
on a few shapes, for tuning the automatic choice (`--wg`: also the Hopper
kernel forced at each tile width, `wg256`, `wg128`, `wg64`, with and without
splits, and the automatic choice without it, `nowg`). Writes
`matmul.json` and `matmul.png` under bench/results/ (or --out). Follows the
bench/common.py interface: `run(args)` returns tables, records, plots, notes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import myns  # noqa: E402

KINDS = {  # name: (dtype, allow_tf32)
    "bf16": (torch.bfloat16, False),
    "f16": (torch.float16, False),
    "f32": (torch.float32, False),
    "tf32": (torch.float32, True),
}


def timer(device):
    if device == "cuda":
        from triton.testing import do_bench

        return lambda fn, rep=60: do_bench(fn, warmup=15, rep=rep, return_mode="median")

    def cpu(fn, rep=0):
        fn()
        ts = []
        for _ in range(3):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return sorted(ts)[1] * 1e3

    return cpu


def set_kind(kind):
    dtype, tf32 = KINDS[kind]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    return dtype


def measure(bench, kind, m, k, n, device, variants=("myns", "torch")):
    """ms per call of each implementation on one fresh random problem, and the
    relative difference between the two results."""
    dtype = set_kind(kind)
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    fns = {"myns": lambda: myns.matmul(a, b), "torch": lambda: torch.matmul(a, b)}
    flop = 2.0 * m * n * k
    rep = 60 if flop < 2e12 else 150  # a few calls even for the slowest (f32 8192^3)
    out = {name: bench(fns[name], rep) for name in variants}
    x, y = myns.matmul(a, b).double(), torch.matmul(a, b).double()
    diff = ((x - y).norm() / y.norm().clamp_min(1e-30)).item()
    del a, b, x, y
    return out, flop, diff


def sweep_rows(bench, device, wg=False):
    """Every forced variant on a few shapes (tuning data); the Hopper kernel
    forced at each tile width (`wg256`, `wg128`, `wg64`) and left out (`nowg`)
    only when asked."""
    big = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
           (128, 4096, 4096), (128, 4096, 14336), (128, 14336, 4096), (4096, 4096, 14336), (1, 4096, 14336), (16, 4096, 4096)]
    small = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (4096, 4096, 4096), (128, 4096, 4096), (16, 4096, 4096)]
    tf32 = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
            (128, 4096, 4096), (128, 4096, 14336), (128, 14336, 4096)]
    hopper = ["nowg", "wg256", "wg128", "wg64", "wg256/2", "wg128/2", "wg64/2", "wg64/4"] if wg else []
    variants = {
        "bf16": ["auto"] + hopper + ["256", "128", "64", "64/2", "16", "16/4", "16/8"],
        "tf32": ["auto"] + hopper + (["wgr", "wgr256", "wgr128", "wgr64", "wgr128/2", "wgr128/4"] if wg else []) + ["256", "128", "64", "16/8"],
        "f32": ["auto", "128", "64", "64/2", "64/4", "64/8", "128/2", "16/4", "16/8"],
    }
    shapes = {"bf16": big, "tf32": tf32, "f32": small}
    rows = []
    for kind, vs in variants.items():
        for m, k, n in shapes[kind]:
            dtype = set_kind(kind)
            a = torch.randn(m, k, device=device, dtype=dtype)
            b = torch.randn(k, n, device=device, dtype=dtype)
            flop = 2.0 * m * n * k
            t_torch = bench(lambda: torch.matmul(a, b))
            for v in vs:
                if v.startswith("16") and m > 16:
                    continue
                before = os.environ.get("MYNS_MATMUL_KERNEL")
                if before == "nowg" and v in ("wg", "auto+wg", "auto"):
                    v = "nowg"
                myns.set_override("MYNS_MATMUL_KERNEL", v)
                try:
                    t = bench(lambda: myns.matmul(a, b))
                    rows.append([kind, f"{m}x{k}x{n}", v, flop / t / 1e9, t_torch / t])
                finally:
                    myns.set_override("MYNS_MATMUL_KERNEL", before)
            print(f"sweep {kind} {m}x{k}x{n} done", flush=True)
    return rows


COLD = textwrap.dedent(
    """
    import sys, time, torch
    t0 = time.perf_counter()
    torch.ops.load_library(sys.argv[1])
    a = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    torch.ops.myns.matmul(a, a)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    torch.ops.myns.matmul(a.float(), a.float())
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    print(f"{(t1 - t0) * 1e3:.1f} {(t2 - t1) * 1e3:.1f} {(t3 - t2) * 1e3:.1f}")
    """
)


def cold_start_ms():
    """(load + tensor set-up, first bf16 matmul, first f32 matmul) in a fresh
    process with the driver's JIT cache disabled."""
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    r = subprocess.run([sys.executable, "-c", COLD, myns.library_path()], capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        return None
    return [float(x) for x in r.stdout.split()]


def run(args) -> dict:
    device = getattr(args, "device", "cuda" if torch.cuda.is_available() else "cpu")
    quick = getattr(args, "quick", False)
    bench = timer(device)
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    if device != "cuda":
        squares, llm_m, llm_kn, kinds = [128, 256], [1, 16], [(256, 512)], ["f32"]
    elif quick:
        squares, llm_m, llm_kn, kinds = [1024, 4096], [1, 4096], [(4096, 4096)], ["bf16", "f32", "tf32"]
    else:
        squares = [256, 512, 1024, 2048, 4096, 8192]
        llm_m = [1, 16, 128, 4096]
        llm_kn = [(4096, 4096), (4096, 14336), (14336, 4096)]
        kinds = list(KINDS)
    problems = [("square", s, s, s) for s in squares] + [("llm", m, k, n) for m in llm_m for k, n in llm_kn]

    records, rows, notes = [], [], []
    t_start = time.time()
    try:
        for kind in kinds:
            for group, m, k, n in problems:
                t, flop, diff = measure(bench, kind, m, k, n, device)
                rec = {
                    "kind": kind, "group": group, "m": m, "k": k, "n": n,
                    "myns_ms": t["myns"], "torch_ms": t["torch"],
                    "myns_tflops": flop / t["myns"] / 1e9, "torch_tflops": flop / t["torch"] / 1e9,
                    "ratio": t["torch"] / t["myns"], "rel_diff": diff,
                }
                records.append(rec)
                rows.append([kind, f"{m}x{k}x{n}", rec["myns_tflops"], rec["torch_tflops"], rec["ratio"], diff])
                print(f"{kind:>5} {m:>5}x{k:<5}x{n:<5} myns {rec['myns_tflops']:7.1f} TFLOP/s  torch "
                      f"{rec['torch_tflops']:7.1f}  ratio {rec['ratio']:5.2f}  diff {diff:.1e}", flush=True)
        want_sweep = getattr(args, "matmul_sweep", False) and device == "cuda"
        sweep = sweep_rows(bench, device, getattr(args, "matmul_wg", False)) if want_sweep else []
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    tables = [{
        "title": "myns.matmul vs torch.matmul (TFLOP/s, ratio = torch time / myns time)",
        "columns": ["dtype", "MxKxN", "myns TFLOP/s", "torch TFLOP/s", "ratio", "rel diff"],
        "rows": rows,
    }]
    if sweep:
        tables.append({"title": "forced variants (MYNS_MATMUL_KERNEL)", "columns": ["dtype", "MxKxN", "variant", "TFLOP/s", "ratio"], "rows": sweep})
    for r in records:
        if r["ratio"] < 0.5:
            notes.append(f"{r['kind']} {r['m']}x{r['k']}x{r['n']}: ratio {r['ratio']:.2f} (< 0.5)")
    if device == "cuda":
        cold = cold_start_ms()
        if cold:
            notes.append(
                f"cold start (CUDA_CACHE_DISABLE=1, fresh process): load_library + set-up {cold[0]:.0f} ms, "
                f"first bf16 matmul {cold[1]:.0f} ms, first f32 matmul {cold[2]:.0f} ms"
            )
    plots = []
    for kind in kinds:
        sq = [r for r in records if r["kind"] == kind and r["group"] == "square"]
        if sq:
            plots.append({
                "title": f"square {kind}", "kind": "line", "xlabel": "M = K = N", "ylabel": "TFLOP/s", "logx": True,
                "series": {"myns": [[r["m"], r["myns_tflops"]] for r in sq], "torch (cuBLAS)": [[r["m"], r["torch_tflops"]] for r in sq]},
            })
    llm = [r for r in records if r["group"] == "llm"]
    if llm:
        plots.append({
            "title": "LLM shapes: myns / cuBLAS speed ratio", "kind": "bar", "xlabel": "MxKxN", "ylabel": "ratio",
            "series": {kind: [[f"{r['m']}x{r['k']}x{r['n']}", r["ratio"]] for r in llm if r["kind"] == kind] for kind in kinds},
        })
    return {"tables": tables, "records": records, "plots": plots, "notes": notes, "seconds": time.time() - t_start}


def add_args(p: argparse.ArgumentParser) -> None:
    """Options of this benchmark (bench/run.py calls this hook too)."""
    p.add_argument("--matmul-sweep", action="store_true", help="matmul: also time every forced kernel variant on a few shapes")
    p.add_argument("--matmul-wg", action="store_true", help="matmul: include the Hopper (wgmma) kernel in the sweep")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        from common import add_common_args

        add_common_args(p)
    except ImportError:
        p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
        p.add_argument("--quick", action="store_true")
    add_args(p)
    p.add_argument("--sweep", dest="matmul_sweep", action="store_true", help="short for --matmul-sweep")
    p.add_argument("--wg", dest="matmul_wg", action="store_true", help="short for --matmul-wg")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = p.parse_args()
    res = run(args)
    os.makedirs(args.out, exist_ok=True)
    try:
        from common import environment, markdown_table, plot

        res["environment"] = environment(args.device)
        for t in res["tables"]:
            print(f"\n{t['title']}\n" + markdown_table(t))
        drawn = plot(res, os.path.join(args.out, "matmul.png"), "myns.matmul vs torch.matmul")
    except ImportError:
        drawn = False
        for t in res["tables"]:
            print(f"\n{t['title']}")
            for row in t["rows"]:
                print(" ".join(f"{c:.3g}" if isinstance(c, float) else str(c) for c in row))
    for n in res["notes"]:
        print("-", n)
    with open(os.path.join(args.out, "matmul.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"wrote {args.out}/matmul.json" + (" and matmul.png" if drawn else "") + f" ({res['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
