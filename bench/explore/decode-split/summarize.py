"""The automatic choice before (4e2d259, `auto` in results/{first,confirm,few}-*)
and after (a0009f3, results/auto-*) against cuBLAS: GB/s of x + weights +
out and ratio (cuBLAS time / ours), clean L2 / after do_bench's flush.
Medians over each run's rounds; cuBLAS from the after-run.

    python bench/explore/decode-split/summarize.py
"""
import json
import os
import statistics

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def load(name):
    with open(os.path.join(R, name)) as f:
        return json.load(f)["rows"]


def key(r):
    return (r["kind"], r["m"], r["k"], r["n"], r["lay"])


before = {key(r): r for n in ("first", "confirm", "few") for r in load(f"{n}-h200-4e2d259.json") if r["variant"] == "auto"}
after = load("auto-h200-a0009f3.json")
torch_after = {key(r): r for r in after if r["variant"] == "torch"}
print("| dtype | M x K x N | weights | cuBLAS GB/s | before: GB/s, ratio | after: GB/s, ratio |")
print("|---|---|---|---|---|---|")
for r in after:
    if r["variant"] != "auto":
        continue
    k = key(r)
    kind, m, kk, n, lay = k
    gb = (m * kk + kk * n + m * n) * (2 if kind in ("bf16", "f16") else 4) / 1e9
    t = torch_after[k]
    tc, tz = (statistics.median(t[f]) for f in ("clean_ms", "zero_ms"))
    cells = []
    for row in (before[k], r):
        c, z = (statistics.median(row[f]) for f in ("clean_ms", "zero_ms"))
        cells.append(f"{gb / c * 1e3:.0f} / {gb / z * 1e3:.0f}, {tc / c:.2f} / {tz / z:.2f}")
    print(f"| {kind} | {m} x {kk} x {n} | {'nn.Linear' if lay == 'nk' else 'row-major'} | {gb / tc * 1e3:.0f} / {gb / tz * 1e3:.0f} | {cells[0]} | {cells[1]} |")
