"""Exploration (not a shipped benchmark), on the H100: the row-op shapes where
bench/results/h100.md (df7f1af) has myns below the best baseline from 8 MB
up (fused_add_rms_norm 1024x2048 0.74, softmax 1024x8192 0.78, rms_norm
1024x8192 0.89, ...). For each: every forced build and block shape
(`MYNS_ROW_KERNEL`, through myns.set_override) against compiled and Liger,
timed as bench_rowwise.py times them (CUDA graphs of N calls over rotated
input sets, interleaved rounds, median), each myns variant's output checked
against float64 within the op's bound.

    OUT=<dir> MYNS_LIBRARY=.gpu/libmyns.so PYTHONPATH=python_loader:bench \\
        python3 bench/explore/rowwise-gaps/rowwise_gaps.py [--rounds 5] [--shapes op:RxH,...]
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import bench_rowwise as br  # noqa: E402
from common import check_outputs, graph_times  # noqa: E402

import myns  # noqa: E402

SHAPES = ["fused_add_rms_norm:1024x2048", "fused_add_rms_norm:2048x2048", "fused_add_rms_norm:64x16384",
          "fused_add_rms_norm:1024x8192", "rms_norm:1024x8192", "rms_norm:1024x2048", "softmax:1024x8192",
          "softmax:1024x2048", "softmax:1024x16384", "softmax:2048x8192", "softmax:4096x8192"]


def variants(units):
    out = ["auto"]
    for bx in (64, 128, 256, 512, 1024):
        if bx * 16 >= units:  # the general build covers a row in at most a few passes
            out.append(f"general:{bx}")
    for c in (1, 2):
        for bx in (32, 64, 128, 256, 512, 1024):
            if bx * c >= units and bx <= 2 * max(32, math.ceil(units / c)):
                out.append(f"r{c}:{bx}")
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--variants", default="", help="comma-separated MYNS_ROW_KERNEL values (default: a sweep per shape)")
    a = p.parse_args()
    out_dir = os.environ.get("OUT", "/tmp")
    liger, why = br._liger()
    if why:
        print(why)
    results = []
    for item in a.shapes.split(","):
        op, dims = item.split(":")
        rows, hidden = (int(v) for v in dims.split("x"))
        dtype = torch.bfloat16
        torch._dynamo.reset()
        nbytes, make, args_of, impls = br.spec(op, rows, hidden, dtype, "cuda", "max-autotune-no-cudagraphs", liger)
        base = {k: v for k, v in impls.items() if k in ("compiled", "liger")}
        units = hidden // 8
        first = make()
        in_bytes = sum(t.numel() * t.element_size() for t in first)
        sets = [first] + [make() for _ in range(max(0, min(16, math.ceil(2 * br.L2_BYTES / in_bytes)) - 1))]
        calls = {}
        errs = {}
        for v in (a.variants.split(",") if a.variants else variants(units)):
            def fn(*ins, v=v):
                myns.set_override("MYNS_ROW_KERNEL", v)
                return impls["myns"](*ins)
            try:
                pre = [t.clone() for t in first]
                with torch.no_grad():
                    outs = fn(*[t.clone() for t in first])
                worst, msg = check_outputs(op, args_of(*pre), outs, f"{v} {op} {dims}")
            except Exception as e:
                print(f"{op} {dims} {v}: {type(e).__name__}: {str(e)[:160]}")
                continue
            finally:
                myns.set_override("MYNS_ROW_KERNEL", None)
            errs[v] = worst
            if msg:
                print("FAILED CHECK", msg)
                continue
            calls[v] = lambda i, fn=fn: fn(*sets[i % len(sets)])
        for k, f in base.items():
            calls[k] = lambda i, f=f: f(*sets[i % len(sets)])
        est_us = max(3.0, nbytes / 2.5e6)
        n_calls = int(max(2, min(128, 1000 / est_us, (2 << 30) // max(1, nbytes // 2))))
        with torch.no_grad():
            times = graph_times(calls, n_calls, a.rounds, keep=len(sets))
        myns.set_override("MYNS_ROW_KERNEL", None)
        med = {k: statistics.median(v) for k, v in times.items()}
        best_base = min(med.get("compiled", 1e9), med.get("liger", 1e9))
        rec = {"op": op, "rows": rows, "hidden": hidden, "bytes": nbytes, "us": med, "err_over_bound": errs,
               "best_baseline_us": best_base}
        results.append(rec)
        order = sorted(med, key=med.get)
        print(f"\n{op} bf16 {dims} ({nbytes / 1e6:.1f} MB): best baseline {best_base:.2f} us")
        for k in order:
            print(f"  {k:>14} {med[k]:8.2f} us  {nbytes / med[k] / 1e6:5.2f} TB/s  vs best baseline {best_base / med[k]:.3f}")
        torch.cuda.empty_cache()
    with open(os.path.join(out_dir, "rowwise-gaps.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
