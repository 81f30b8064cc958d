#!/usr/bin/env bash
# Device run (repository root, build/mmab carried; base.so = the bundle of
# 2c0cc63): where the Hopper kernel's L2 traffic goes, ours against
# cuBLAS's. ncu's memory tables (requests and sectors by operation, L2 and
# DRAM) and the L2/DRAM counters, one launch after two warm calls
# (../ncu_matmul.py): 3000 x 1000 x 2000 bf16 (ragged; the 192-wide tile in
# pairs), 1024^3 f16 (the 64-wide tile).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=build/mmab
[ -f $D/base.so ] || xz -dk $D/base.so.xz
export MYNS_LIBRARY=$PWD/$D/base.so PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
one() {  # one <tag> <ncu_matmul.py args...>
  local tag=$1; shift
  timeout 150 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section MemoryWorkloadAnalysis_Chart --print-details all --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip 2 --launch-count 1 \
    python3 bench/explore/ncu_matmul.py "$@" > "$OUT/ncu-$tag.txt" 2>&1
  echo "== $tag: exit $?"
  grep -E "^  [a-zA-Z_].*\(|^    Duration|^    L2 Cache Throughput|^    DRAM Throughput" "$OUT/ncu-$tag.txt" | head -6
}
for who in myns torch; do
  one ragged-3000-$who $who 3000 1000 2000
  one f16-1024-$who $who 1024 1024 1024 f16
done 2>&1 | tee "$OUT/summary.txt"
