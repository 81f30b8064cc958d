#!/usr/bin/env bash
# GPU machine, repo root, .gpu/ from `make gpu-bundle`: bench/explore/flce_profile.py.
set -u
OUT=${OUT:-/tmp/myns-gpu}; mkdir -p "$OUT"
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/*.xz"):
    with lzma.open(f) as s, open(f[:-3], "wb") as d: d.write(s.read())
    os.remove(f)
PY
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader
python3 bench/explore/flce_profile.py 2>&1 | tee "$OUT/flce_profile.log"
