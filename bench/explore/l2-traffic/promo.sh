#!/usr/bin/env bash
# Device run (build/mmab carried; new.so reads MYNS_EXPLORE_L2_PROMO, an
# exploration build not on main: the TMA tensor maps' L2 promotion, none /
# 64 / 128 / 256 bytes, 256 being the library's): kernel times of the
# `start` set (../matmul_kernel_times.py) under each, two alternating rounds.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export MYNS_LIBRARY=$PWD/$D/new.so PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
for r in 1 2; do
  for promo in 256 none 64 128; do
    echo "=== $promo round $r"
    MYNS_EXPLORE_L2_PROMO=$promo timeout 120 python3 bench/explore/matmul_kernel_times.py --set ${SET:-start} --calls 20 2>&1 | grep -v Warn
  done
done > "$OUT/promo.log" 2>&1
python3 - "$OUT/promo.log" <<'PY' | tee "$OUT/promo-summary.txt"
import collections, re, statistics, sys
res = collections.defaultdict(lambda: collections.defaultdict(list))
lib = None
for line in open(sys.argv[1]):
    m = re.match(r"=== (\w+) round", line)
    if m:
        lib = m.group(1); continue
    m = re.match(r"(\S+ \S+ \S+) (myns|torch): kernels ([\d.]+) us", line)
    if m:
        res[(m.group(1), m.group(2))][lib].append(float(m.group(3)))
libs = ["256", "none", "64", "128"]
print("shape impl", *libs)
for k, v in res.items():
    print(*k, *[f"{statistics.median(v[l]):.1f}" if v.get(l) else "-" for l in libs])
PY
