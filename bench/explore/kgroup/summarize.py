"""Table of kernel times from matmul_kernel_times.py logs: kt-<lib>-<round>.log
in a folder, one row per product and implementation, us a call per library
and round, and alt / base (median of rounds).

    python3 bench/explore/kgroup/summarize.py DIR [base alt]
"""

import collections
import glob
import os
import re
import statistics
import sys

d = sys.argv[1]
libs = sys.argv[2:4] or ["base", "alt"]
pat = re.compile(r"^(\S+ \S+ \S+) (myns[^:]*|torch): kernels ([0-9.]+) us per call")
t = collections.defaultdict(lambda: collections.defaultdict(list))
order = []
for lib in libs:
    for f in sorted(glob.glob(os.path.join(d, f"kt-{lib}-*.log"))):
        for line in open(f):
            m = pat.match(line)
            if m:
                key = (m.group(1), m.group(2))
                if key not in order:
                    order.append(key)
                t[key][lib].append(float(m.group(3)))
print(f"| product | implementation | {libs[0]}, us | {libs[1]}, us | {libs[1]} / {libs[0]} |")
print("|---|---|---|---|---|")
for key in order:
    a, b = t[key][libs[0]], t[key][libs[1]]
    r = statistics.median(b) / statistics.median(a) if a and b else float("nan")
    print(f"| {key[0]} | {key[1]} | {' / '.join(f'{x:.1f}' for x in a)} | {' / '.join(f'{x:.1f}' for x in b)} | {r:.3f} |")
