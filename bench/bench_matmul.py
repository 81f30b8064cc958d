"""myns.matmul / myns.bmm against torch.matmul (cuBLAS) in the same process.

Classes (each row: MxKxN, or BxMxKxN for bmm):
- square: 512..8192 in bf16, f16, TF32 and f32 (TF32 off);
- llm: Llama / Mistral projections with 4096 or 8192 tokens (q/o 4096x4096,
  k/v 4096x1024, gate/up 4096x14336, down 14336x4096), bf16 and f16, and
  TF32 with 4096 tokens;
- decode: M = 1, 16, 128 against 4096x4096, 4096x14336 and 14336x4096
  weights (row-major, [K, N]), with the weights' GB/s; M = 1, 16 against
  Qwen2-7B's 3584x18944 as nn.Linear holds it; TF32 and float32 (TF32 off)
  against 4096x4096;
- small_m: 32 and 64 rows (batched decode) against the same weights and
  Qwen2-7B's 3584x18944 as nn.Linear holds them, bf16, and TF32 against
  4096x4096, with GB/s;
- prefill: 256 to 512 tokens against LLM weights as nn.Linear holds them
  (Phi-3-mini's qkv 3072x9216 and down 8192x3072, Qwen2-7B's qkv 3584x4608
  and down 18944x3584, Llama-3-8B's qkv 4096x6144 and gate/up 4096x14336,
  Llama-2-7B's up 4096x11008), bf16: products of one or two waves of tiles,
  or of half a wave split in two K ranges;
- lm_head: x @ W^T with nn.Linear's weight layout, vocab 32000, 32001,
  50257, 128256, for 2048 tokens and for one (decode);
- unaligned: K or N off by one (4096x4096x4095, 4096x4095x4096,
  2048x32001x4096, 8192x50257x4096; TF32 and f16 too) beside their
  aligned neighbours;
- ragged: 3000x1000x2000, 4096x4088x4096, 1000x1000x1000, 2000x3000x1000,
  2000x2000x600, and 768x2048x2048, 1280x2048x1024, 1280x3000x1536 with
  nn.Linear's weight;
- bmm: 32x512^3, 8x2048^3, 256x128x64x128 (many small), bf16.

Timing: triton.testing.do_bench median (L2 flushed before each call) of
each implementation (decode rows, M <= 16, also with a clean L2: see
`clean_l2_ms`), in `--rounds` (>= 3) interleaved rounds in one process
on the same inputs, the order of the two alternating round by round; the
reported time is the median over rounds, the ratio torch time / myns time.

Error: every myns result is checked elementwise against a float64 product
(on up to 64 sampled rows for large outputs) with the bound of
tests/python/test_matmul_kernels.py:
|out - ref| <= 2 (u_in + sqrt(K) 2^-24) sum_k |a_ik||b_kj| + u_out |ref|;
the worst element's share of its bound is reported, and the benchmark
exits non-zero when any element exceeds its bound.

    python bench/bench_matmul.py [--quick] [--rounds 3] [--only square,decode] [--out DIR]

Writes `<out>/h100-matmul.md` and `.json` (machine tag from the GPU name)
and appends one line to `<out>/history.jsonl`. Also follows bench/common.py's
interface (`run(args)` returns tables, records, notes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import myns  # noqa: E402

KINDS = {"bf16": (torch.bfloat16, False), "f16": (torch.float16, False), "f32": (torch.float32, False), "tf32": (torch.float32, True)}
U_IN = {"f32": 0.0, "tf32": 2.0**-11, "f16": 0.0, "bf16": 0.0}
U_OUT = {"f32": 2.0**-24, "tf32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
U_SUB = {"f32": 2.0**-150, "tf32": 2.0**-150, "f16": 2.0**-25, "bf16": 2.0**-134}
# Targets of the matmul issue, by class (ratio = cuBLAS time / myns time).
TARGETS = {"square": 1.05, "llm": 1.05, "decode": 1.1, "small_m": 1.0, "prefill": 1.0, "lm_head": 1.0, "unaligned": None, "ragged": 1.0, "bmm": 1.0}


def problems(quick: bool):
    """(class, kind, batch, m, k, n, b_layout): b_layout "kn" row-major [K, N],
    "nk" the transpose of a [N, K] weight (nn.Linear)."""
    P = []
    squares = [1024, 4096] if quick else [512, 1024, 2048, 4096, 8192]
    for kind in ["bf16", "f16", "tf32", "f32"]:
        for s in squares:
            P.append(("square", kind, 1, s, s, s, "kn"))
    if not quick:
        for kind in ["bf16", "f16", "tf32"]:
            for m in [4096, 8192]:
                for k, n in [(4096, 4096), (4096, 1024), (4096, 14336), (14336, 4096)]:
                    if m == 8192 and ((k, n) == (4096, 1024) or kind == "tf32"):
                        continue
                    P.append(("llm", kind, 1, m, k, n, "nk"))
    for m in [1, 16, 128]:
        for k, n in [(4096, 4096), (4096, 14336), (14336, 4096)]:
            if quick and (k, n) != (4096, 4096):
                continue
            P.append(("decode", "bf16", 1, m, k, n, "kn"))
    if not quick:
        # Qwen2-7B's gate/up weight as nn.Linear holds it: 296 column strips.
        for m in [1, 16]:
            P.append(("decode", "bf16", 1, m, 3584, 18944, "nk"))
        # Down projections on fewer strips than SMs: Llama-3.2-1B's (8192 to
        # 2048: 32 strips) and Qwen2-7B's (18944 to 3584: 56).
        for k, n in [(8192, 2048), (18944, 3584)]:
            for m in [1, 16]:
                P.append(("decode", "bf16", 1, m, k, n, "nk"))
        for kind in ["tf32", "f32"]:
            for m in [1, 16, 128]:
                P.append(("decode", kind, 1, m, 4096, 4096, "kn"))
        # TF32 at 16 rows against long K and wide N (nn.Linear layout).
        for k, n in [(14336, 4096), (4096, 14336)]:
            P.append(("decode", "tf32", 1, 16, k, n, "nk"))
        for m in [32, 64]:
            # (Qwen2-7B's 3584 x 18944: one wave of 64 x 144 tiles.)
            for k, n in [(4096, 4096), (4096, 14336), (14336, 4096), (3584, 18944)]:
                P.append(("small_m", "bf16", 1, m, k, n, "nk"))
            P.append(("small_m", "tf32", 1, m, 4096, 4096, "nk"))
        for m, k, n in [(256, 3072, 9216), (512, 3072, 9216), (512, 3584, 4608), (512, 18944, 3584), (256, 4096, 6144), (512, 4096, 14336), (384, 4096, 11008), (256, 18944, 3584), (256, 8192, 3072)]:
            P.append(("prefill", "bf16", 1, m, k, n, "nk"))
    for v in [32000, 32001] + ([] if quick else [50257, 128256]):
        P.append(("lm_head", "bf16", 1, 2048, 4096, v, "nk"))
    for v in [] if quick else [32000, 32001, 128256]:
        P.append(("lm_head", "bf16", 1, 1, 4096, v, "nk"))
    off = [(4096, 4096, 4095), (4096, 4095, 4096), (2048, 32001, 4096), (2048, 32000, 4096), (8192, 50257, 4096), (8192, 50256, 4096)]
    for m, k, n in off[:2] if quick else off:
        P.append(("unaligned", "bf16", 1, m, k, n, "kn"))
    if not quick:
        P.append(("unaligned", "tf32", 1, 4096, 4095, 4096, "kn"))
        P.append(("unaligned", "tf32", 1, 4096, 4096, 4095, "kn"))
        P.append(("unaligned", "f16", 1, 4096, 4096, 4095, "kn"))
    for m, k, n in [(3000, 1000, 2000), (4096, 4096, 4088), (1000, 1000, 1000)][: 1 if quick else 3]:
        P.append(("ragged", "bf16", 1, m, k, n, "kn"))
    if not quick:
        for m, k, n, lay in [(2000, 3000, 1000, "kn"), (2000, 2000, 600, "kn"), (768, 2048, 2048, "nk"), (1280, 2048, 1024, "nk"), (1280, 3000, 1536, "nk")]:
            P.append(("ragged", "bf16", 1, m, k, n, lay))
    for b, s in [(32, 512), (8, 2048)][: 1 if quick else 2]:
        P.append(("bmm", "bf16", b, s, s, s, "kn"))
    if not quick:
        P.append(("bmm", "bf16", 256, 128, 64, 128, "kn"))
    return P


def operands(kind, batch, m, k, n, b_layout):
    dtype = KINDS[kind][0]
    shape_a = (m, k) if batch == 1 else (batch, m, k)
    a = torch.randn(shape_a, device="cuda", dtype=dtype)
    if b_layout == "nk":
        b = torch.randn(n, k, device="cuda", dtype=dtype).t()
    else:
        b = torch.randn((k, n) if batch == 1 else (batch, k, n), device="cuda", dtype=dtype)
    return a, b


def bound_share(out, a, b, kind, max_rows=64):
    """max over checked elements of |out - ref| / bound (> 1: out of bound),
    and the number of elements checked; rows sampled when there are many."""
    a3, b3, o3 = (a, b, out) if a.dim() == 3 else (a[None], b[None], out[None])
    rows = a3.shape[1]
    gen = torch.Generator(device="cpu").manual_seed(rows)
    idx = torch.randperm(rows, generator=gen)[:max_rows].sort().values.to(a.device) if rows > max_rows else torch.arange(rows, device=a.device)
    worst, count = 0.0, 0
    for z in range(min(a3.shape[0], 4)):
        ad, bd = a3[z].index_select(0, idx).double(), b3[z].double()
        ref = ad @ bd
        mag = ad.abs() @ bd.abs()
        bound = 2 * (U_IN[kind] + math.sqrt(a.shape[-1]) * 2.0**-24) * mag + U_OUT[kind] * ref.abs() * 1.001 + U_SUB[kind]
        err = (o3[z].index_select(0, idx).double() - ref).abs()
        if not torch.isfinite(o3[z]).all():
            return float("inf"), count
        worst = max(worst, (err / bound).max().item())
        count += err.numel()
    return worst, count


def bench_pair(fns, rounds, rep_ms):
    from triton.testing import do_bench

    times = {name: [] for name in fns}
    names = list(fns)
    for name in names:
        fns[name]()
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            times[name].append(do_bench(fns[name], warmup=10, rep=rep_ms, return_mode="median"))
    return {name: statistics.median(ts) for name, ts in times.items()}, times


_READ_BUF = []


def clean_l2_ms(fn, calls=60):
    """Median of `calls` timed calls, each after a read of 256 MB: L2 holds
    clean lines only, as after a decode step's previous layer read its
    weights. (do_bench's flush writes zeros, so a call starts by writing
    back dirty lines, which skews memory-bound decode timings.)"""
    if not _READ_BUF:
        _READ_BUF.append(torch.ones(64 * 1024 * 1024, dtype=torch.float32, device="cuda"))
    buf, ts = _READ_BUF[0], []
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
    for s, e in ev:
        buf.sum()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev)


def run(args) -> dict:
    quick = getattr(args, "quick", False)
    rounds = max(3, getattr(args, "rounds", None) or 3)
    # Classes to run (this script's --only; bench/run.py's --only names benchmarks).
    only = [s for s in (getattr(args, "matmul_only", "") or "").split(",") if s]
    kinds = [s for s in (getattr(args, "matmul_kinds", "") or "").split(",") if s]
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    records, rows, notes, clean_rows = [], [], [], []
    t_start = time.time()
    failed = []
    try:
        for cls, kind, batch, m, k, n, lay in problems(quick):
            if (only and cls not in only) or (kinds and kind not in kinds):
                continue
            torch.backends.cuda.matmul.allow_tf32 = KINDS[kind][1]
            torch.manual_seed(m * 7 + k * 3 + n + batch)
            a, b = operands(kind, batch, m, k, n, lay)
            mine = (lambda: myns.bmm(a, b)) if batch > 1 else (lambda: myns.matmul(a, b))
            theirs = lambda: torch.matmul(a, b)  # noqa: E731
            flop = 2.0 * batch * m * n * k
            rep = 40 if flop < 1e12 else 80
            med, per_round = bench_pair({"myns": mine, "torch": theirs}, rounds, rep)
            if m <= 16 and cls in ("decode", "lm_head"):
                clean = {"myns": [], "torch": []}
                for r in range(rounds):
                    for name, fn in (("myns", mine), ("torch", theirs))[:: 1 if r % 2 == 0 else -1]:
                        clean[name].append(clean_l2_ms(fn))
                clean_med = {name: statistics.median(ts) for name, ts in clean.items()}
            else:
                clean_med = None
            share, checked = bound_share(mine(), a, b, kind)
            elem = a.element_size()
            gbytes = (batch * (m * k + k * n + m * n)) * elem / 1e9
            rec = {
                "class": cls, "kind": kind, "batch": batch, "m": m, "k": k, "n": n, "b_layout": lay,
                "myns_ms": med["myns"], "torch_ms": med["torch"],
                "myns_tflops": flop / med["myns"] / 1e9, "torch_tflops": flop / med["torch"] / 1e9,
                "myns_gbs": gbytes / med["myns"] * 1e3, "torch_gbs": gbytes / med["torch"] * 1e3,
                "ratio": med["torch"] / med["myns"], "rounds": per_round,
                "bound_share": share, "checked": checked,
            }
            records.append(rec)
            shape = f"{m}x{k}x{n}" if batch == 1 else f"{batch}x{m}x{k}x{n}"
            if lay == "nk":
                shape += " (W^T)"
            if clean_med:
                rec.update(clean_myns_ms=clean_med["myns"], clean_torch_ms=clean_med["torch"], clean_ratio=clean_med["torch"] / clean_med["myns"])
                clean_rows.append([cls, kind, shape, f"{gbytes / clean_med['myns'] * 1e3:.0f} / {gbytes / clean_med['torch'] * 1e3:.0f}",
                                   round(rec["clean_ratio"], 3), f"{rec['myns_gbs']:.0f} / {rec['torch_gbs']:.0f}", round(rec["ratio"], 3)])
            bw = f"{rec['myns_gbs']:.0f} / {rec['torch_gbs']:.0f}" if cls in ("decode", "small_m") or (cls == "lm_head" and m == 1) else ""
            rows.append([cls, kind, shape, round(rec["myns_tflops"], 1), round(rec["torch_tflops"], 1), round(rec["ratio"], 3), bw, f"{share:.2f}"])
            if not share <= 1.0:
                failed.append(f"{kind} {shape}: error {share:.2f} of its bound")
            print(f"{cls:>9} {kind:>4} {shape:>22} myns {rec['myns_tflops']:7.1f} torch {rec['torch_tflops']:7.1f} "
                  f"ratio {rec['ratio']:5.3f} {bw:>12} err/bound {share:.2f}", flush=True)
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    # Unaligned shapes against their aligned neighbours (myns TFLOP/s).
    by = {(r["kind"], r["m"], r["k"], r["n"], r["b_layout"]): r for r in records}
    neighbours = {(4096, 4096, 4095): (4096, 4096, 4096), (4096, 4095, 4096): (4096, 4096, 4096),
                  (2048, 32001, 4096): (2048, 32000, 4096), (8192, 50257, 4096): (8192, 50256, 4096)}
    for r in records:
        key = (r["m"], r["k"], r["n"])
        if r["class"] == "unaligned" and key in neighbours:
            nb = by.get((r["kind"], *neighbours[key], "kn"))
            if nb:
                r["vs_aligned"] = r["myns_tflops"] / nb["myns_tflops"]
                notes.append(f"{r['kind']} {r['m']}x{r['k']}x{r['n']}: {r['vs_aligned']:.2f} of the aligned neighbour's throughput "
                             f"({r['myns_tflops']:.0f} vs {nb['myns_tflops']:.0f} TFLOP/s), {r['ratio']:.2f}x cuBLAS")
    summary = []
    for cls, target in TARGETS.items():
        rs = [r for r in records if r["class"] == cls]
        if rs:
            lo = min(rs, key=lambda r: r["ratio"])
            summary.append([cls, len(rs), round(statistics.median(r["ratio"] for r in rs), 3), round(lo["ratio"], 3),
                            f"{lo['kind']} {lo['m']}x{lo['k']}x{lo['n']}", "" if target is None else target])
    if failed:
        notes.append("ERRORS OUT OF BOUND: " + "; ".join(failed))
    tables = [
        {"title": "myns vs torch.matmul (cuBLAS): TFLOP/s, ratio = torch time / myns time; GB/s of the operands (decode); "
                  "err/bound = worst element's error over its bound (<= 1 passes)",
         "columns": ["class", "dtype", "MxKxN", "myns TFLOP/s", "torch TFLOP/s", "ratio", "GB/s myns / torch", "err/bound"], "rows": rows},
        {"title": "decode (M <= 16) with a clean L2: each call after a 256 MB read instead of do_bench's zero-fill "
                  "(no dirty lines to write back); GB/s of the operands, ratio = torch time / myns time; median of 60 calls per round",
         "columns": ["class", "dtype", "MxKxN", "GB/s myns / torch, clean L2", "ratio, clean L2", "GB/s myns / torch, do_bench", "ratio, do_bench"],
         "rows": clean_rows},
        {"title": "by class (ratio median and minimum; target)", "columns": ["class", "problems", "median ratio", "min ratio", "min at", "target"], "rows": summary},
    ]
    return {"tables": tables, "records": records, "notes": notes, "failed": failed, "seconds": time.time() - t_start, "rounds": rounds}


def markdown_table(t):
    out = [f"**{t['title']}**", "", "| " + " | ".join(t["columns"]) + " |", "|" + "---|" * len(t["columns"])]
    for r in t["rows"]:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def kind_list(value: str) -> str:
    """--kinds: names of KINDS only (a misspelt kind would silently run none)."""
    unknown = [s for s in value.split(",") if s and s not in KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
    return value


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", dest="matmul_only", default="", help="comma-separated classes")
    p.add_argument("--kinds", dest="matmul_kinds", type=kind_list, default="", help=f"comma-separated kinds ({', '.join(KINDS)})")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    p.add_argument("--command", default=" ".join(["python"] + sys.argv), help="the command line to record in the report")
    args = p.parse_args()
    res = run(args)
    gpu = torch.cuda.get_device_name()
    tag = "h100" if "H100" in gpu else "h200" if "H200" in gpu else gpu.lower().replace(" ", "_")
    commit = os.environ.get("MYNS_GIT_COMMIT", "unknown")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    env = {"gpu": gpu, "torch": torch.__version__, "cuda": torch.version.cuda, "commit": commit, "date": when,
           "command": args.command, "rounds": res["rounds"]}
    res["environment"] = env
    os.makedirs(args.out, exist_ok=True)
    md = [f"# myns matmul on {gpu}", "", f"commit `{commit}`, {when}, torch {torch.__version__}", "",
          f"command: `{args.command}`", "", f"{res['rounds']} interleaved rounds, do_bench medians; {res['seconds']:.0f} s", ""]
    for t in res["tables"]:
        md += [markdown_table(t), ""]
    md += [f"- {n}" for n in res["notes"]]
    text = "\n".join(md) + "\n"
    print("\n" + text)
    with open(os.path.join(args.out, f"{tag}-matmul.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, f"{tag}-matmul.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "history.jsonl"), "a") as f:
        line = {**env, "classes": {r[0]: {"median": r[2], "min": r[3]} for r in res["tables"][-1]["rows"]}, "failed": res["failed"]}
        f.write(json.dumps(line) + "\n")
    sys.exit(1 if res["failed"] else 0)


if __name__ == "__main__":
    main()
