"""ncu's warp-state samples per SASS instruction, from a source page
exported as CSV (`ncu -i R.ncu-rep --page source --csv --print-source sass`;
results/*.csv.xz: `xz -dk` them first).

    python3 sass_samples.py FILE.csv [FIRST LAST [all]]

Prints the total, then each instruction (index in the listing, samples,
share, times executed, SASS, its three largest stall reasons) with 0.4% of
the samples or more, or every one between FIRST and LAST with `all`.
"""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
hdr = rows[1]
data = rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
col = ix["Warp Stall Sampling (All Samples)"]
tot = sum(int(r[col] or 0) for r in data)
print("total samples", tot, "instructions", len(data))
lo = int(sys.argv[2]) if len(sys.argv) > 2 else 0
hi = int(sys.argv[3]) if len(sys.argv) > 3 else len(data)
every = len(sys.argv) > 4
for n, r in enumerate(data):
    s = int(r[col] or 0)
    if lo <= n < hi and (every or s > tot * 0.004):
        top = sorted(((int(r[ix[h]] or 0), h[6:]) for h in stalls), reverse=True)[:3]
        print(f"{n:5d} {s:6d} {100 * s / tot:5.1f}% ex={r[ix['Instructions Executed']]:>8} {r[1].strip()[:60]:60s} {top}")
