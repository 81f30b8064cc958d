#!/usr/bin/env bash
# Device run: the library (.gpu/libmyns.so, 256-byte L2 promotion on the
# skinny weights' tensor map) against builds with 128-byte and no promotion
# (.gpu/l2_128B.so, .gpu/l2_NONE.so: src/gemm/skinny.rs `wide` changed,
# nothing else), split.py --set prom, one round per process, libraries rotated.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/prom-out}; mkdir -p "$OUT"
for l in l2_128B l2_NONE; do [ -f .gpu/$l.so ] || xz -dk .gpu/$l.so.xz; done
libs=(${LIBS:-libmyns l2_128B l2_NONE})
for r in $(seq 0 $(( ${ROUNDS:-3} - 1 ))); do
  for i in "${!libs[@]}"; do
    l=${libs[$(( (i + r) % ${#libs[@]} ))]}
    MYNS_LIBRARY=$PWD/.gpu/$l.so timeout 120 python3 bench/explore/decode-split/split.py --rounds 1 --set prom > $OUT/prom-$l-r$r.txt 2>&1
    echo "$l round $r rc $?"
  done
done
