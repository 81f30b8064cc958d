#!/usr/bin/env bash
# Device run: split.py's `pair2` (four K ranges in a cluster on few 64-row
# tiles, plan.rs `wgh_k_cluster`; library in .gpu/), then `pair` again,
# its outputs packed into $OUT/pair2.tgz (the device tool brings back a few
# files only).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/pair2-out}; mkdir -p "$OUT/r/pair2" "$OUT/r/pair"
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
timeout 120 python3 bench/explore/decode-split/split.py --rounds 3 --set pair2 --out $OUT/r/pair2 > $OUT/r/pair2.txt 2>&1; echo "pair2 rc $?"
timeout 150 python3 bench/explore/decode-split/split.py --rounds 3 --set pair --out $OUT/r/pair > $OUT/r/pair.txt 2>&1; echo "pair rc $?"
(cd $OUT && tar czf pair2.tgz r && rm -rf r)
