"""Tables of results/run{1,3,4}.json (GB/s; ratio = cuBLAS time / ours).
  python3 bench/explore/skinny/summarize.py"""
import json
import os

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def load(i):
    return {r["shape"]: r for r in json.load(open(f"{here}/run{i}.json"))}


def cell(r, name):
    gb = r["gbytes"] * 1e3
    t = r["median_ms"][name]
    return f"{gb / t:.0f} ({r['median_ms']['cublas'] / t:.3f})"


def best(r):
    med = {k: v for k, v in r["median_ms"].items() if k != "cublas" and not k.startswith("old")}
    k = min(med, key=med.get)
    return f"{k} {cell(r, k)}"


runs = {i: load(i) for i in (1, 3, 4)}
for title, ids in [("do_bench (zero_ flush): run 1 | run 3", (1, 3)), ("read flush: run 4", (4,))]:
    print(f"\n{title}\n")
    print("| shape | " + " | ".join(f"cuBLAS r{i} | old r{i} | best variant r{i}" for i in ids) + " |")
    print("|---" * (1 + 3 * len(ids)) + "|")
    for shape in runs[1]:
        cols = []
        for i in ids:
            r = runs[i][shape]
            gb = r["gbytes"] * 1e3
            cols += [f"{gb / r['median_ms']['cublas']:.0f}", cell(r, f"old/r{r['plan_ranks']}"), best(r)]
        print(f"| {shape} (plan r{runs[1][shape]['plan_ranks']}) | " + " | ".join(cols) + " |")
