"""Medians over rounds of ab.sh / ab2.sh output: per library, product and
column (auto and each forced variant), the ratio to cuBLAS; then new / base.

    python bench/explore/stage-rounds/summarize.py results/ab2-h200-<commit>.md
"""
import re
import statistics
import sys
from collections import defaultdict

vals = defaultdict(list)  # (lib, shape, col) -> ratios
order, cols_of = [], {}
lib = None
for line in open(sys.argv[1]):
    m = re.match(r"## (\S+) round", line)
    if m:
        lib = m.group(1)
        continue
    if line.startswith("| model"):
        head = [c.strip() for c in line.strip().strip("|").split("|")]
        cols = ["auto"] + head[6:]
        continue
    if not line.startswith("|  |"):
        continue
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    shape = cells[1]
    if shape not in cols_of:
        order.append(shape)
        cols_of[shape] = cols
    for c, v in zip(cols, [cells[4]] + cells[6:]):
        try:
            vals[(lib, shape, c)].append(float(v))
        except ValueError:
            pass
libs = sorted({k[0] for k in vals})
base, new = "base", [x for x in libs if x != "base"][0]
print(f"median ratio to cuBLAS, {base} -> {new} (new/base)")
for shape in order:
    parts = []
    for c in cols_of[shape]:
        b, n = vals.get((base, shape, c)), vals.get((new, shape, c))
        if b and n:
            mb, mn = statistics.median(b), statistics.median(n)
            parts.append(f"{c} {mb:.3f}->{mn:.3f} ({mn / mb:.2f})")
    print(f"{shape}: " + "; ".join(parts))
