"""Speed of the LLM row-wise ops (rms_norm, fused_add_rms_norm and its
functional form add_rms_norm, silu_and_mul, softmax; the training step's
layer_norm, gelu_and_mul, rope and cross_entropy) and the streaming ops
(scale, add) against eager
PyTorch, torch.compile of the same computation
(``mode="max-autotune-no-cudagraphs"``, Inductor's fused kernels) and
Liger-Kernel, over a grid of rows x hidden sizes. scale also runs beside a
device copy of the same bytes (``copy``: what "copy speed" means), and scale
and add at 2^28 float32 elements (16384 x 16384).

Method (honest comparisons):

* Every implementation gets the same inputs (several sets, rotated, so
  that the calls of a measurement stream more data than L2 holds), and
  writes its outputs to as many rotating buffers (so that an out-of-place
  implementation's writes reach DRAM as an in-place one's do).
* Device time per call comes from CUDA graphs (bench/common.py
  ``graph_times``): ``N`` calls of an implementation captured in one graph
  and replayed between CUDA events, so the host's launch cost is not in
  the figure, at any size. The compiled functions are compiled once per
  shape, warmed up (autotuning included), then captured like the rest.
* Implementations alternate round-robin within each round (order rotated
  every round), at least 3 rounds; tables show medians over rounds.
* What a Python caller pays per call (host launch cost included: wall time
  of back-to-back calls, interleaved the same way) is its own table, for
  problems up to 8 MB moved.
* Before timing, every implementation's output is checked element by
  element against the float64 reference within the op's bound (the tests'
  tests/python/bounds.py). myns outside its bound FAILS the benchmark
  (``failed_checks``: bench/run.py exits non-zero and the report says which);
  the baselines' worst error/bound ratios are reported, not gated.

Bytes counted are those that must be read and written once.

    python bench/run.py --only rowwise [--quick] [--rowwise-budget-s 240] [--rowwise-no-compile]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

from common import add_common_args, check_outputs, graph_times, interleaved, sync_fn, table

import myns

EPS = 1e-6
OPS = ["rms_norm", "fused_add_rms_norm", "add_rms_norm", "silu_and_mul", "softmax", "scale", "add",
       "layer_norm", "gelu_and_mul", "rope", "cross_entropy"]
# Ops measured on every shape; STREAM_OPS also at STREAM_SHAPES; the
# training-step ops at TRAIN_SHAPES (rope: rows = tokens, hidden = query
# heads x 128, a quarter as many key heads; cross_entropy: rows x vocab).
ROW_OPS = OPS[:6]
STREAM_OPS = ["scale", "add"]
STREAM_SHAPES = [(16384, 16384, torch.float32)]
TRAIN_OPS = ["layer_norm", "gelu_and_mul", "rope"]
TRAIN_SHAPES = [((1024, 8192, torch.bfloat16), TRAIN_OPS), ((8192, 2048, torch.bfloat16), TRAIN_OPS),
                ((8192, 8192, torch.bfloat16), TRAIN_OPS), ((1024, 32000, torch.bfloat16), ["cross_entropy"]),
                ((4096, 32000, torch.bfloat16), ["cross_entropy"])]
ROPE_HEAD_DIM = 128
# check_outputs options per op: cross_entropy's loss is one number over all
# rows, so its reference takes the rows at once (4096 x 32000 in float64: 1 GB).
CHECK_KW = {"cross_entropy": {"chunk_elems": 1 << 28}}
# Baselines in table order; `copy` (a device copy of the same bytes) only
# for scale, and it is not checked (it computes nothing).
BASES = ("eager", "compiled", "liger", "copy")
BF16, F32 = torch.bfloat16, torch.float32
# Problems up to this many bytes moved are launch-bound: the per-call table.
LAUNCH_BOUND_BYTES = 8 << 20
# Shapes in the order they are measured (a run cut short by its budget keeps
# the most telling ones): the 16384 x 8192 reference, the launch-bound sizes
# where host overhead used to hide in the baseline, then the rest of the grid.
FIRST = [(16384, 8192, BF16), (16384, 8192, F32), (1024, 2048, BF16), (1, 4096, BF16), (64, 512, BF16),
         (64, 2048, BF16), (1024, 8192, BF16), (32768, 512, BF16), (1, 512, BF16)]
GRID = [(r, h, BF16) for r in (1, 64, 1024, 8192, 32768) for h in (512, 2048, 8192, 16384)]
L2_BYTES = 50 << 20


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rowwise-budget-s", type=float, default=240.0,
                   help="rowwise: start no new shape after this many seconds (the report lists the rest)")
    p.add_argument("--rowwise-shapes", default="",
                   help="rowwise: only these shapes, e.g. '16384x8192:bf16,1024x2048:f32'")
    p.add_argument("--rowwise-no-compile", action="store_true", help="rowwise: leave out the torch.compile baseline")
    p.add_argument("--rowwise-ops", default="",
                   help="rowwise: only these ops, e.g. 'rope,layer_norm' (on --rowwise-shapes: every op named)")


def _liger():
    """Liger-Kernel's forward functions, or the reason there are none."""
    try:
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction
        from liger_kernel.ops.geglu import LigerGELUMulFunction
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rope import LigerRopeFunction
    except Exception as e:  # not installed (CPU machines; see scripts/gpu_run.sh)
        return None, f"Liger-Kernel not available ({type(e).__name__}: {str(e)[:120]})"
    return {
        "rms_norm": lambda x, w: (LigerRMSNormFunction.apply(x, w, EPS),),
        "fused_add_rms_norm": lambda x, r, w: tuple(LigerFusedAddRMSNormFunction.apply(x, r, w, EPS)),
        "add_rms_norm": lambda x, r, w: tuple(LigerFusedAddRMSNormFunction.apply(x, r, w, EPS)),
        "silu_and_mul": lambda x: (LigerFusedGateUpSiLUMulFunction.apply(x),),
        "softmax": lambda x: (LigerSoftmaxFunction.apply(x),),
        "layer_norm": lambda x, w, b: (LigerLayerNormFunction.apply(x, w, b, EPS),),
        # Liger's GEGLU takes the two halves as tensors of their own (its MLP's
        # gate and up projections): the contiguous copies each input set has.
        "gelu_and_mul": lambda x, a, b: (LigerGELUMulFunction.apply(a, b),),
        # In place on q and k (rotating input sets; the check ran on copies).
        "rope": lambda q, k, c, s: tuple(LigerRopeFunction.apply(q, k, c, s)),
        # Not cross_entropy: its forward reads a count back to the host
        # (`.item()`), which a CUDA graph cannot capture (LIGER_NOT_GRAPHED).
    }, None


LIGER_NOT_GRAPHED = ("Liger-Kernel's cross_entropy is not in the device-time table: its forward reads the count "
                     "of counted rows back to the host (.item()), which a CUDA graph cannot capture; the Llama "
                     "benchmark's per-op table times it forward + backward")


def _rms(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, EPS)


def _fused_eager(x, r, w):
    r.add_(x)
    x.copy_(_rms(r, w))
    return x, r


def _fused_functional(x, r, w):
    # Same bytes as the in-place op (reads x, r; writes two tensors), and
    # side-steps Inductor's handling of input mutation.
    r2 = r + x
    return _rms(r2, w), r2


def _swiglu(x):
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def _geglu(x):
    d = x.shape[-1] // 2
    return F.gelu(x[..., :d], approximate="tanh") * x[..., d:]


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


def _hf_rope(q, k, c, s):
    """transformers' apply_rotary_pos_emb."""
    c, s = c.unsqueeze(1), s.unsqueeze(1)
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s


def spec(op, rows, hidden, dtype, device, compile_mode, liger):
    """(bytes moved, make_inputs() -> tuple, op args from inputs, {impl: fn(*inputs) -> outputs})."""
    es = torch.tensor([], dtype=dtype).element_size()
    n = rows * hidden
    g = lambda *s: torch.randn(*s, device=device, dtype=dtype)  # noqa: E731
    comp = (lambda f: torch.compile(f, mode=compile_mode, dynamic=False)) if compile_mode else None
    if op == "rms_norm":
        nbytes, make, args_of = 2 * n * es + hidden * es, lambda: (g(rows, hidden), g(hidden)), lambda x, w: [x, w, EPS]
        impls = {"myns": lambda x, w: (myns.rms_norm(x, w, EPS),), "eager": lambda x, w: (_rms(x, w),)}
        if comp:
            c = comp(_rms)
            impls["compiled"] = lambda x, w: (c(x, w),)
    elif op == "fused_add_rms_norm":
        nbytes, make, args_of = 4 * n * es + hidden * es, lambda: (g(rows, hidden), g(rows, hidden), g(hidden)), lambda x, r, w: [x, r, w, EPS]
        impls = {"myns": lambda x, r, w: (myns.fused_add_rms_norm(x, r, w, EPS), x, r)[1:], "eager": _fused_eager}
        if comp:
            c = comp(_fused_functional)
            impls["compiled"] = lambda x, r, w: tuple(c(x, r, w))
    elif op == "add_rms_norm":
        # The functional form: fresh outputs, as the baselines write. (The
        # in-place row above writes into its rotating inputs, while a graph of
        # the baselines' calls re-uses one freed output buffer that stays in
        # L2: below about 50 MB that favours them; bench/explore/rowwise-gaps.)
        nbytes, make, args_of = 4 * n * es + hidden * es, lambda: (g(rows, hidden), g(rows, hidden), g(hidden)), lambda x, r, w: [x, r, w, EPS]
        impls = {"myns": lambda x, r, w: tuple(myns.add_rms_norm(x, r, w, EPS)), "eager": _fused_functional}
        if comp:
            c = comp(_fused_functional)
            impls["compiled"] = lambda x, r, w: tuple(c(x, r, w))
    elif op == "silu_and_mul":
        nbytes, make, args_of = 3 * n // 2 * es, lambda: (g(rows, hidden),), lambda x: [x]
        impls = {"myns": lambda x: (myns.silu_and_mul(x),), "eager": lambda x: (_swiglu(x),)}
        if comp:
            c = comp(_swiglu)
            impls["compiled"] = lambda x: (c(x),)
    elif op == "softmax":
        nbytes, make, args_of = 2 * n * es, lambda: (g(rows, hidden),), lambda x: [x, -1]
        impls = {"myns": lambda x: (myns.softmax(x, -1),), "eager": lambda x: (torch.softmax(x, -1),)}
        if comp:
            c = comp(lambda x: torch.softmax(x, -1))
            impls["compiled"] = lambda x: (c(x),)
    elif op == "scale":
        nbytes, make, args_of = 2 * n * es, lambda: (g(rows, hidden),), lambda x: [x, 0.5]
        impls = {"myns": lambda x: (myns.scale(x, 0.5),), "eager": lambda x: (x * 0.5,),
                 "copy": lambda x: (torch.empty_like(x).copy_(x),)}
        if comp:
            c = comp(lambda x: x * 0.5)
            impls["compiled"] = lambda x: (c(x),)
    elif op == "layer_norm":
        nbytes, make = 2 * n * es + 2 * hidden * es, lambda: (g(rows, hidden), g(hidden), g(hidden))
        args_of = lambda x, w, b: [x, w, b, EPS]  # noqa: E731
        ln = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS)  # noqa: E731
        impls = {"myns": lambda x, w, b: (myns.layer_norm(x, w, b, EPS),), "eager": lambda x, w, b: (ln(x, w, b),)}
        if comp:
            c = comp(ln)
            impls["compiled"] = lambda x, w, b: (c(x, w, b),)
    elif op == "gelu_and_mul":
        def make():
            x = g(rows, hidden)
            a, b = x.chunk(2, -1)
            return x, a.contiguous(), b.contiguous()
        nbytes, args_of = 3 * n // 2 * es, lambda x, a, b: [x, "tanh"]
        impls = {"myns": lambda x, a, b: (myns.gelu_and_mul(x, "tanh"),), "eager": lambda x, a, b: (_geglu(x),)}
        if comp:
            c = comp(_geglu)
            impls["compiled"] = lambda x, a, b: (c(x),)
    elif op == "rope":
        d = ROPE_HEAD_DIM if hidden % ROPE_HEAD_DIM == 0 else hidden
        hq = hidden // d
        hk = max(1, hq // 4)

        def make():
            # As transformers makes them: transposed views of [B, S, H, D];
            # cos and sin of real angles, [1, S, D].
            q = g(1, rows, hq, d).transpose(1, 2)
            k = g(1, rows, hk, d).transpose(1, 2)
            ang = torch.arange(rows, device=device, dtype=torch.float32)[:, None] * torch.rand(d // 2, device=device)
            ang = torch.cat([ang, ang], -1)[None]
            return q, k, ang.cos().to(dtype), ang.sin().to(dtype)
        nbytes = 2 * rows * (hq + hk) * d * es + 2 * rows * d * es
        args_of = lambda q, k, c, s: [q, k, c, s]  # noqa: E731
        impls = {"myns": lambda q, k, c, s: tuple(myns.rope(q, k, c, s)), "eager": lambda q, k, c, s: tuple(_hf_rope(q, k, c, s))}
        if comp:
            c_ = comp(_hf_rope)
            impls["compiled"] = lambda q, k, c, s: tuple(c_(q, k, c, s))
    elif op == "cross_entropy":
        nbytes = n * es + rows * 8
        make = lambda: (g(rows, hidden), torch.randint(0, hidden, (rows,), device=device))  # noqa: E731
        args_of = lambda x, t: [x, t, -100, "mean"]  # noqa: E731
        impls = {"myns": lambda x, t: (myns.cross_entropy(x, t, -100, "mean"),),
                 "eager": lambda x, t: (F.cross_entropy(x, t),)}
        if comp:
            c = comp(lambda x, t: F.cross_entropy(x, t))
            impls["compiled"] = lambda x, t: (c(x, t),)
    else:  # add
        nbytes, make, args_of = 3 * n * es, lambda: (g(rows, hidden), g(rows, hidden)), lambda a, b: [a, b]
        impls = {"myns": lambda a, b: (myns.add(a, b),), "eager": lambda a, b: (torch.add(a, b),)}
        if comp:
            c = comp(lambda a, b: a + b)
            impls["compiled"] = lambda a, b: (c(a, b),)
    if liger and op in liger:
        impls["liger"] = liger[op]
    return nbytes, make, args_of, impls


def _parse_shapes(text):
    out = []
    for item in filter(None, text.split(",")):
        dims, _, dt = item.partition(":")
        r, h = (int(v) for v in dims.lower().split("x"))
        out.append((r, h, {"bf16": BF16, "f32": F32, "f16": torch.float16}[dt or "bf16"]))
    return out


def shapes_for(args):
    if getattr(args, "rowwise_shapes", ""):
        return _parse_shapes(args.rowwise_shapes)
    if args.quick:
        return [(64, 512, BF16), (1024, 2048, BF16)] if args.device.startswith("cuda") else [(4, 512, BF16)]
    return FIRST + [s for s in GRID if s not in FIRST]


def measure_shape(op, rows, hidden, dtype, args, liger, notes, failed):
    dev = args.device
    cuda = dev.startswith("cuda")
    n_rounds = max(3, args.rounds or (3 if args.quick else 5))
    mode = None if getattr(args, "rowwise_no_compile", False) else "max-autotune-no-cudagraphs"
    nbytes, make, args_of, impls = spec(op, rows, hidden, dtype, dev, mode, liger)
    dt = str(dtype).removeprefix("torch.")
    what = f"{op} {dt} {rows}x{hidden}"
    rec = {"op": op, "dtype": dt, "rows": rows, "hidden": hidden, "bytes": nbytes, "impls": list(impls)}

    # Correctness first, on fresh inputs (in-place implementations work on copies).
    first = make()
    for name, fn in list(impls.items()):
        if name == "copy":
            continue
        pre = [t.clone() for t in first]
        try:
            with torch.no_grad():
                outs = fn(*[t.clone() for t in first])
        except Exception as e:  # a baseline that cannot run this shape is left out, and said so
            if name == "myns":
                raise
            notes.append(f"{name} {what}: left out, {type(e).__name__}: {str(e).splitlines()[0][:160]}")
            del impls[name]
            continue
        worst, msg = check_outputs(op, args_of(*pre), outs, f"{name} {what}", **CHECK_KW.get(op, {}))
        rec[f"{name}_err_over_bound"] = worst
        if msg:
            rec[f"{name}_check"] = msg
            if name == "myns":
                failed.append(msg)
            else:
                notes.append(f"{name} outside the myns bound: {msg}")

    # Input sets: enough that one measurement streams at least twice L2.
    in_bytes = sum(t.numel() * t.element_size() for t in first)
    sets = [first] + [make() for _ in range(max(0, min(16, math.ceil(2 * L2_BYTES / max(in_bytes, 1))) - 1))]
    calls = {name: (lambda i, fn=fn: fn(*sets[i % len(sets)])) for name, fn in impls.items()}
    with torch.no_grad():
        if cuda:
            est_us = max(3.0, nbytes / 2.5e6)  # bytes at ~2.5 TB/s, or launch-bound
            out_bytes = max(1, nbytes // 2)
            n_calls = int(max(2, min(128, 1000 / est_us, (2 << 30) // out_bytes)))
            # Outputs rotate like the inputs (see graph_times: in-place ops
            # write to their rotating inputs).
            times = graph_times(calls, n_calls, n_rounds, keep=len(sets))
            rec["graph_calls"] = n_calls
        else:  # CPU smoke runs: wall time per call, interleaved the same way
            times = interleaved({k: (lambda c=c: c(0)) for k, c in calls.items()}, n_rounds, 3 if args.quick else 20, lambda: None)
        rec["rounds_us"] = times
        for name, ts in times.items():
            rec[f"{name}_us"] = statistics.median(ts)
            rec[f"{name}_tbps"] = nbytes / (rec[f"{name}_us"] * 1e-6) / 1e12
        if nbytes <= LAUNCH_BOUND_BYTES:
            host = interleaved({k: (lambda c=c: c(0)) for k, c in calls.items()}, n_rounds,
                               20 if args.quick else 200, sync_fn(dev))
            rec["call_rounds_us"] = host
            for name, ts in host.items():
                rec[f"{name}_call_us"] = statistics.median(ts)
    for base in BASES:
        if f"{base}_us" in rec:
            rec[f"vs_{base}"] = rec[f"{base}_us"] / rec["myns_us"]
    return rec


def run(args) -> dict:
    t0 = time.time()
    dev = args.device
    liger, why = _liger() if dev.startswith("cuda") else (None, "Liger-Kernel: CUDA only")
    notes = [why] if why else []
    if liger and (not getattr(args, "rowwise_ops", "") or "cross_entropy" in args.rowwise_ops.split(",")):
        notes.append(LIGER_NOT_GRAPHED)
    failed: list[str] = []
    records = []
    shapes = [(s, ROW_OPS) for s in shapes_for(args)]
    if dev.startswith("cuda") and not args.quick and not getattr(args, "rowwise_shapes", ""):
        # Copy speed at 2^28 elements: after the reference shapes, before the grid.
        shapes[2:2] = [(s, STREAM_OPS) for s in STREAM_SHAPES]
        # The training-step ops next, before the rest of the grid.
        shapes[3:3] = TRAIN_SHAPES
    elif not dev.startswith("cuda"):
        shapes = [(s, OPS) for s, _ in shapes]
    only = [o for o in getattr(args, "rowwise_ops", "").split(",") if o]
    if unknown := set(only) - set(OPS):
        raise SystemExit(f"--rowwise-ops: unknown ops {sorted(unknown)}; known: {', '.join(OPS)}")
    if only and getattr(args, "rowwise_shapes", ""):
        shapes = [(s, only) for s, _ in shapes]
    elif only:
        shapes = [(s, [o for o in ops if o in only]) for s, ops in shapes]
        shapes = [(s, ops) for s, ops in shapes if ops]
    budget = getattr(args, "rowwise_budget_s", None)
    for i, ((rows, hidden, dtype), ops) in enumerate(shapes):
        if budget and time.time() - t0 > budget:
            notes.append(f"budget of {budget:.0f} s spent: not measured " + ", ".join(f"{r}x{h} {str(d)[6:]}" for (r, h, d), _ in shapes[i:]))
            break
        torch._dynamo.reset()
        for op in ops:
            try:
                rec = measure_shape(op, rows, hidden, dtype, args, liger, notes, failed)
            except Exception as e:  # one failing baseline must not lose the rest
                notes.append(f"{op} {rows}x{hidden} {dtype}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
                continue
            records.append(rec)
            print(f"{op:>20} {rec['dtype']:>8} {rows:>6}x{hidden:<6} myns {rec['myns_us']:8.2f} us {rec['myns_tbps']:5.2f} TB/s"
                  + "".join(f" | {b} {rec[f'{b}_us']:8.2f}" for b in BASES if f"{b}_us" in rec), flush=True)
        if dev.startswith("cuda"):
            torch.cuda.empty_cache()
    return {
        "tables": tables(records, dev),
        "records": records,
        "plots": plots(records),
        "notes": notes + [
            ("device time: CUDA graphs of N calls per implementation, replays timed with CUDA events"
             if dev.startswith("cuda") else "time: wall clock per call (a CPU smoke run)")
            + ", implementations interleaved round-robin (order rotated) in each round; medians over rounds. "
            "Ratios: baseline time / myns time (above 1: myns faster).",
        ] + ([] if getattr(args, "rowwise_no_compile", False) else [
            "compiled: torch.compile(mode='max-autotune-no-cudagraphs'), compiled once per shape, warmed up, then captured.",
        ]),
        "failed_checks": failed,
        "key_figures": key_figures(records),
        "seconds": time.time() - t0,
    }


def _f(rec, key):
    return rec.get(key, float("nan"))


def tables(records, dev):
    bases = [b for b in BASES if any(f"{b}_us" in r for r in records)]
    rows = []
    for r in records:
        rows.append([r["op"], r["dtype"], f"{r['rows']}x{r['hidden']}", r["bytes"] / 1e6, _f(r, "myns_us"),
                     *[_f(r, f"{b}_us") for b in bases], _f(r, "myns_tbps"), *[_f(r, f"vs_{b}") for b in bases],
                     _f(r, "myns_err_over_bound")])
    out = [table(
        f"Device time per call, µs ({'CUDA graphs of N calls, ' if dev.startswith('cuda') else 'wall time, '}"
        "median of interleaved rounds); ratios = baseline time / myns time",
        ["op", "dtype", "rows x hidden", "MB moved", "myns", *bases, "myns TB/s", *[f"vs {b}" for b in bases], "myns err/bound"],
        rows,
    )]
    small = [r for r in records if "myns_call_us" in r]
    if small:
        out.append(table(
            "Per call from Python, host launch cost included (µs; wall time of back-to-back calls, interleaved, "
            f"median of rounds), problems up to {LAUNCH_BOUND_BYTES >> 20} MB moved",
            ["op", "dtype", "rows x hidden", "myns", *bases],
            [[r["op"], r["dtype"], f"{r['rows']}x{r['hidden']}", _f(r, "myns_call_us"), *[_f(r, f"{b}_call_us") for b in bases]] for r in small],
        ))
    return out


def plots(records):
    res = [r for r in records if r["dtype"] == "bfloat16"]
    out = []
    for op in OPS:
        rs = sorted((r for r in res if r["op"] == op), key=lambda r: r["bytes"])
        if not rs:
            continue
        series = {impl: [[r["bytes"] / 1e6, r[f"{impl}_tbps"]] for r in rs if f"{impl}_tbps" in r]
                  for impl in ("myns", "compiled", "eager", "liger")}
        out.append({"title": f"{op} (bf16)", "kind": "line", "xlabel": "MB moved", "ylabel": "TB/s", "logx": True,
                    "series": {k: v for k, v in series.items() if v}})
    return out


def key_figures(records):
    """For bench/results/history.jsonl: the reference shape per op and dtype,
    and the spread of myns against compiled."""
    kf = {}
    for r in records:
        if (r["rows"], r["hidden"]) in ((16384, 8192), (16384, 16384)):
            shape = f"{r['rows']}x{r['hidden']}"
            kf[f"{r['op']} {r['dtype']} {shape} TB/s"] = round(r["myns_tbps"], 3)
            for b in ("compiled", "eager", "copy"):
                if f"vs_{b}" in r and (b == "compiled" or r["op"] in STREAM_OPS):
                    kf[f"{r['op']} {r['dtype']} {shape} vs {b}"] = round(r[f"vs_{b}"], 3)
    big = [r["vs_compiled"] for r in records if "vs_compiled" in r and r["bytes"] >= LAUNCH_BOUND_BYTES and r["op"] in ROW_OPS]
    small = [r["vs_compiled"] for r in records if "vs_compiled" in r and r["bytes"] < LAUNCH_BOUND_BYTES and r["op"] in ROW_OPS]
    if big:
        kf["vs compiled from 8 MB: min / median"] = [round(min(big), 3), round(statistics.median(big), 3)]
    if small:
        kf["vs compiled under 8 MB: min / median"] = [round(min(small), 3), round(statistics.median(small), 3)]
    # Issue #19's bar: level with the best of eager, compiled and Liger from 8 MB up.
    best = [min(r[f"vs_{b}"] for b in ("eager", "compiled", "liger") if f"vs_{b}" in r) for r in records
            if r["bytes"] >= LAUNCH_BOUND_BYTES and r["op"] not in STREAM_OPS and any(f"vs_{b}" in r for b in ("eager", "compiled", "liger"))]
    if best:
        kf["vs best baseline from 8 MB: min / median"] = [round(min(best), 3), round(statistics.median(best), 3)]
    kf["worst myns err/bound"] = round(max((r.get("myns_err_over_bound", 0.0) for r in records), default=0.0), 3)
    return kf


if __name__ == "__main__":
    p = add_common_args(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter))
    add_args(p)
    res = run(p.parse_args())
    from common import markdown_table

    for t in res["tables"]:
        print(f"\n**{t['title']}**\n\n{markdown_table(t)}")
    for n in res["notes"] + [f"FAILED: {m}" for m in res["failed_checks"]]:
        print("-", n)
