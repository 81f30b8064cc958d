#!/usr/bin/env bash
# ncu of the 64-row tiles' K ranges in a cluster against the split through
# L2 (forced variants, bf16 nn.Linear weights; library in .gpu/): why two
# ranges in a cluster lose at 96 rows (two rows of tiles) and win at 64.
# Writes $OUT/ncu-h200-<variant>-<M>_<K>_<N>.txt.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/ncu-kc}; mkdir -p "$OUT"
for c in "wgh128k2 96 14336 4096" "wgh128/2 96 14336 4096" "wgh128k2 64 14336 4096" "wgh64k2 64 4096 4096" "wgh64k2 96 4096 4096"; do
  set -- $c
  f="$OUT/ncu-h200-$(echo $1 | tr / s)-$2_$3_$4.txt"
  MYNS_MATMUL_KERNEL=$1 timeout 60 ncu --clock-control none --kernel-name regex:mm_wg --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
    python3 bench/explore/skinny/ncu_decode.py myns nk $2 $3 $4 > "$f" 2>&1
  echo "== $c"; grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Grid Size|Cluster|Waves Per SM|L2 Hit" "$f" | head -14
done
