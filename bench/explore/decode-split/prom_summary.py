"""Summary of prom.sh's logs: per shape and library, our GB/s (clean L2 /
after do_bench's flush) as the median over the rounds (one per process),
each round's clean figure, and the ratio of each library to the first.

    python bench/explore/decode-split/prom_summary.py DIR [libmyns l2_128B ...]
"""
import collections
import glob
import os
import re
import statistics
import sys

d = sys.argv[1]
libs = sys.argv[2:] or ["libmyns", "l2_128B", "l2_NONE"]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(d, "prom-*.txt"))):
    lib = re.match(r"prom-(.*)-r\d+\.txt", os.path.basename(f)).group(1)
    shape = None
    for line in open(f):
        m = re.match(r"^(\w+) (\d+x\d+x\d+) (\w\w)  \(GB", line)
        if m:
            shape = " ".join(m.groups())
            continue
        m = re.match(r"\s+auto:\s+(\d+) /\s+(\d+)", line)
        if m and shape:
            res[shape][lib].append((int(m.group(1)), int(m.group(2))))
print(f"| shape | {' | '.join(libs)} | {' | '.join(l + ' / ' + libs[0] for l in libs[1:])} |")
print("|---" * (2 * len(libs)) + "|")
for shape, per in res.items():
    med = {l: (statistics.median(x[0] for x in per[l]), statistics.median(x[1] for x in per[l])) for l in libs}
    cells = [f"{med[l][0]:.0f} / {med[l][1]:.0f} ({' '.join(str(x[0]) for x in per[l])})" for l in libs]
    ratios = [f"{med[l][0] / med[libs[0]][0]:.3f} / {med[l][1] / med[libs[0]][1]:.3f}" for l in libs[1:]]
    print(f"| {shape} | {' | '.join(cells)} | {' | '.join(ratios)} |")
