"""Summaries for run.sh: `summary.py KTIMES_LOG` prints, per shape and
implementation, the median kernel time of each library over the rounds;
`summary.py --ab OUT` the median cuBLAS ratio of each library per
bench_matmul.py row (records in OUT/ab-<lib>-<round>/*.json)."""

import collections
import glob
import json
import re
import statistics
import sys


def ktimes(path):
    res = collections.defaultdict(lambda: collections.defaultdict(list))
    lib = None
    for line in open(path):
        m = re.match(r"=== (\w+) round", line)
        if m:
            lib = m.group(1)
            continue
        m = re.match(r"(\S+ \S+ \S+) (.+): kernels ([\d.]+) us", line)
        if m and lib:
            res[(m.group(1), m.group(2))][lib].append(float(m.group(3)))
    libs = sorted({lb for v in res.values() for lb in v})
    print("shape impl", *[f"{lb} us" for lb in libs], "new/base")
    for (shape, impl), v in res.items():
        med = {lb: statistics.median(v[lb]) for lb in libs if v.get(lb)}
        ratio = f"{med['new'] / med['base']:.3f}" if "new" in med and "base" in med else "-"
        print(shape, impl, *[f"{med[lb]:.1f}" if lb in med else "-" for lb in libs], ratio)


def ab(out):
    res = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in glob.glob(f"{out}/ab-*-*/*.json"):
        lib = f.split("/ab-")[1].split("-")[0]
        d = json.load(open(f))
        for r in d.get("records", d if isinstance(d, list) else []):
            key = (r["class"], r["kind"], r["batch"], r["m"], r["k"], r["n"], r["b_layout"])
            res[key][lib].append(r.get("ratio"))
    libs = sorted({lb for v in res.values() for lb in v})
    print("shape", *[f"{lb} ratio" for lb in libs])
    for k, v in sorted(res.items()):
        print(" ".join(map(str, k)), *[f"{statistics.median(v[lb]):.3f}({','.join(f'{x:.2f}' for x in v[lb])})" if v.get(lb) else "-" for lb in libs])


if __name__ == "__main__":
    if sys.argv[1] == "--ab":
        ab(sys.argv[2])
    else:
        ktimes(sys.argv[1])
