"""Per-call host overhead of myns ops against PyTorch's own, and CUDA-graph
replay of myns ops against the same graph of aten ops.

Per call: each op at its smallest useful size (bench/samples.py; 1024
float32 elements for add, 16x16 for matmul) called back to back ``--calls``
times with one synchronize at the end; the wall time per call is what a
Python caller pays to get work onto the GPU (argument parsing, dispatch,
output allocation, launch). Four ways to call the same computation:

* ``torch.ops.myns.<op>``: the dispatcher op, through torch's generic
  ``torch.ops`` binding;
* ``myns.<op>``: the package's typed wrapper;
* ``torch.ops.aten.<op>``: aten's op through the same generic binding;
* ``torch.<op>``: PyTorch's generated Python binding (the fastest way into
  aten from Python).

Host timings drift by up to 2x between rounds on a shared machine, so the
variants are interleaved in ``--rounds`` rounds (order rotated each round)
and ratios are the median of per-round ratios.

CUDA graphs: a graph of 1 call and a graph of 100 calls of each op, replayed
back to back; per replay host time (1 call: the launch cost of a graph) and
device time per op (100 calls, CUDA events), myns against aten.

    python bench/bench_overhead.py [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (  # noqa: E402
    add_common_args,
    calls,
    interleaved,
    median_ratio,
    rounds,
    summarize,
    sync_fn,
    table,
)
from samples import HEADLINE, SAMPLES  # noqa: E402

import myns  # noqa: E402

GRAPH_OPS = 100

ORDER = 10  # bench/run.py runs lower first


def _impls(op: str, args: tuple) -> dict[str, tuple]:
    s = SAMPLES[op]
    impls = {
        "torch.ops.myns": (getattr(torch.ops.myns, op), args),
        "myns wrapper": (getattr(myns, op), args),
    }
    if s.aten:
        impls["torch.ops.aten"] = s.aten(args)
    if s.torch_fn:
        impls["torch.*"] = s.torch_fn(args)
    return impls


def _name(kind: str, op: str, fn) -> str:
    if kind == "torch.ops.myns":
        return f"torch.ops.myns.{op}"
    if kind == "myns wrapper":
        return f"myns.{op}"
    if kind == "torch.ops.aten":
        return f"torch.ops.{fn}"
    return f"torch.{getattr(fn, '__qualname__', fn)}"


def _ordered_ops() -> tuple[list[str], list[str]]:
    names = myns.op_names()
    ops = [o for o in HEADLINE if o in names] + [o for o in names if o not in HEADLINE]
    missing = [o for o in ops if o not in SAMPLES]
    return [o for o in ops if o in SAMPLES], missing


def per_call(args, records, notes):
    dev = args.device
    sync = sync_fn(dev)
    R, N = rounds(args), calls(args)
    ops, missing = _ordered_ops()
    if missing:
        notes.append(f"no sample inputs in bench/samples.py for {', '.join(missing)}: skipped")
    rows, ratio_rows = [], []
    for op in ops:
        headline = op in HEADLINE
        n_calls = N if headline else max(100, N // 4)
        n_rounds = R if headline else max(3, min(R, 7))
        inputs = SAMPLES[op].make(dev)
        impls = _impls(op, inputs)
        try:
            times = interleaved(impls, n_rounds, n_calls, sync)
        except Exception as e:  # one broken op must not hide the others
            notes.append(f"{op}: failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            continue
        med = {k: statistics.median(v) for k, v in times.items()}
        for kind, (fn, _) in impls.items():
            records.append({
                "what": "per_call_us", "op": op, "impl": kind, "callable": _name(kind, op, fn),
                "inputs": SAMPLES[op].desc, "device": dev, "calls": n_calls,
                "rounds_us": times[kind], **{f"{k}_us": v for k, v in summarize(times[kind]).items() if k != "n"},
            })
        r_ops = median_ratio(times, "torch.ops.myns", "torch.ops.aten") if "torch.ops.aten" in times else float("nan")
        r_wrap = median_ratio(times, "myns wrapper", "torch.*") if "torch.*" in times else float("nan")
        r_self = median_ratio(times, "myns wrapper", "torch.ops.myns")
        records.append({"what": "per_call_ratio", "op": op, "device": dev, "rounds": n_rounds,
                        "myns_ops_over_aten_ops": r_ops, "myns_wrapper_over_torch": r_wrap,
                        "myns_wrapper_over_myns_ops": r_self})
        rows.append([op, SAMPLES[op].desc, med["torch.ops.myns"], med["myns wrapper"],
                     med.get("torch.ops.aten", float("nan")), med.get("torch.*", float("nan")), r_ops, r_wrap,
                     f"{n_rounds}x{n_calls}"])
        ratio_rows.append((op, r_ops, r_wrap))
    return rows, ratio_rows


def autograd_case(args, records):
    """The same calls with inputs that require grad: the graph is recorded
    (and freed at once, as the result is dropped)."""
    dev = args.device
    sync = sync_fn(dev)
    R, N = rounds(args), max(100, calls(args) // 2)
    rows = []
    for op in HEADLINE:
        if op not in SAMPLES or op not in myns.op_names():
            continue
        inputs = tuple(x.detach().requires_grad_() if isinstance(x, torch.Tensor) else x for x in SAMPLES[op].make(dev))
        impls = {k: v for k, v in _impls(op, inputs).items() if k in ("torch.ops.myns", "torch.ops.aten", "torch.*")}
        times = interleaved(impls, R, N, sync)
        med = {k: statistics.median(v) for k, v in times.items()}
        r = median_ratio(times, "torch.ops.myns", "torch.ops.aten") if "torch.ops.aten" in times else float("nan")
        records.append({"what": "per_call_requires_grad_us", "op": op, "device": dev,
                        **{f"{k}_us": v for k, v in med.items()}, "myns_ops_over_aten_ops": r})
        rows.append([op, med["torch.ops.myns"], med.get("torch.ops.aten", float("nan")), med.get("torch.*", float("nan")), r])
    return rows


def _capture(fn, fargs, n):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up (module loading, allocator) outside the capture
        for _ in range(3):
            fn(*fargs)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [fn(*fargs) for _ in range(n)]
    torch.cuda.synchronize()
    return g, outs


def graphs(args, records, notes):
    dev = args.device
    if not dev.startswith("cuda"):
        notes.append("CUDA-graph replay: skipped (needs --device cuda)")
        return []
    R = rounds(args)
    K1 = 200 if args.quick else 2000
    KN = 5 if args.quick else 50
    ops, _ = _ordered_ops()
    rows = []
    for op in ops:
        s = SAMPLES[op]
        if not s.aten:
            continue
        inputs = s.make(dev)
        impls = _impls(op, inputs)
        try:
            g1 = {k: _capture(impls[k][0], impls[k][1], 1) for k in ("torch.ops.myns", "torch.ops.aten")}
            gn = {k: _capture(impls[k][0], impls[k][1], GRAPH_OPS) for k in ("torch.ops.myns", "torch.ops.aten")}
        except Exception as e:
            notes.append(f"CUDA graph of {op}: failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            continue
        host = interleaved({k: g.replay for k, (g, _) in g1.items()}, R, K1, torch.cuda.synchronize)
        dev_us: dict[str, list[float]] = {k: [] for k in gn}
        for r in range(R):
            for k in (list(gn) if r % 2 == 0 else list(gn)[::-1]):
                g = gn[k][0]
                g.replay()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(KN):
                    g.replay()
                end.record()
                torch.cuda.synchronize()
                dev_us[k].append(start.elapsed_time(end) * 1e3 / (KN * GRAPH_OPS))
        h = {k: statistics.median(v) for k, v in host.items()}
        d = {k: statistics.median(v) for k, v in dev_us.items()}
        r1 = median_ratio(host, "torch.ops.myns", "torch.ops.aten")
        rn = median_ratio(dev_us, "torch.ops.myns", "torch.ops.aten")
        records.append({"what": "graph_replay", "op": op, "inputs": s.desc,
                        "replay_1op_us": h, "per_op_in_100op_graph_us": d,
                        "ratio_1op": r1, "ratio_100op": rn, "host_rounds_us": host, "device_rounds_us": dev_us})
        rows.append([op, s.desc, h["torch.ops.myns"], h["torch.ops.aten"], r1,
                     d["torch.ops.myns"], d["torch.ops.aten"], rn])
    return rows


def run(args) -> dict:
    t0 = time.time()
    records: list[dict] = []
    notes: list[str] = []
    tables, plots = [], []
    rows, ratios = per_call(args, records, notes)
    tables.append(table(
        f"Host time per call (µs), median of rounds; ratios are medians of per-round ratios ({args.device})",
        ["op", "inputs", "torch.ops.myns", "myns.<op>", "torch.ops.aten", "torch.<op>",
         "ops: myns/aten", "wrapper: myns/torch", "rounds x calls"],
        rows,
    ))
    kinds = ["torch.ops.myns", "myns wrapper", "torch.ops.aten", "torch.*"]
    plots.append({
        "title": f"host time per call ({args.device})", "kind": "bar", "xlabel": "op", "ylabel": "µs per call",
        "logy": True,
        "series": {k: [[r[0], r[2 + i]] for r in rows if r[2 + i] == r[2 + i]] for i, k in enumerate(kinds)},
    })
    plots.append({
        "title": "per-call ratios (median of rounds; target <= 1.0)", "kind": "bar", "xlabel": "op", "ylabel": "ratio",
        "series": {
            "torch.ops.myns / torch.ops.aten": [[op, a] for op, a, _ in ratios if a == a],
            "myns.<op> / torch.<op>": [[op, b] for op, _, b in ratios if b == b],
        },
    })
    ag = autograd_case(args, records)
    if ag:
        tables.append(table(
            "Host time per call (µs) with inputs that require grad (graph recorded)",
            ["op", "torch.ops.myns", "torch.ops.aten", "torch.<op>", "myns/aten"], ag,
        ))
    gr = graphs(args, records, notes)
    if gr:
        tables.append(table(
            f"CUDA-graph replay: graph of 1 call (µs per replay, host loop) and of {GRAPH_OPS} calls (device µs per op)",
            ["op", "inputs", "1 call: myns", "1 call: aten", "ratio", f"{GRAPH_OPS} calls: myns", f"{GRAPH_OPS} calls: aten", "ratio"],
            gr,
        ))
        plots.append({
            "title": f"CUDA-graph replay, device µs per op ({GRAPH_OPS}-op graph)", "kind": "bar", "xlabel": "op",
            "ylabel": "µs per op",
            "series": {"myns": [[r[0], r[5]] for r in gr], "aten": [[r[0], r[6]] for r in gr]},
        })
    notes.append(
        "per call: host wall time of back-to-back calls with one synchronize at the end, outputs dropped at once; "
        "myns.<op> is the package wrapper, torch.<op> PyTorch's generated binding"
    )
    return {"tables": tables, "records": records, "plots": plots, "notes": notes, "seconds": time.time() - t0}


if __name__ == "__main__":
    p = add_common_args(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter))
    res = run(p.parse_args())
    from common import markdown_table

    for t in res["tables"]:
        print(f"\n**{t['title']}**\n\n{markdown_table(t)}")
    for n in res["notes"]:
        print("-", n)
