#!/usr/bin/env bash
# Device run (build/mmab carried, new2.so = a1389d0): kernel times of the
# `misaligned` set (../matmul_kernel_times.py) on every cooperative width,
# alone and in pairs, beside the automatic choice; two rounds.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=build/mmab
[ -f $D/new2.so ] || xz -dk $D/new2.so.xz
export MYNS_LIBRARY=$PWD/$D/new2.so PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
for r in 1 2; do
  echo "=== new round $r"
  timeout 200 python3 bench/explore/matmul_kernel_times.py --set misaligned --calls 20 \
    --variants wg64,wg128,wg128c2,wg192c1,wg192c2,wg256c1,wg256c2 2>&1 | grep -v Warn
done > "$OUT/misaligned.log" 2>&1
python3 bench/explore/pair192/summary.py "$OUT/misaligned.log" | tee "$OUT/misaligned-summary.txt"
