#!/usr/bin/env bash
# Device run for 33-64 rows on the streaming build's 8 m blocks (library in
# .gpu/): the decode test under memcheck (40 and 64 rows among its cases;
# the forced 8 m block variants), then split.py's `rows64` set (forced
# streaming build against the tile kernels) and `rows32` (rings and splits
# at 17-32 rows).
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/rows64-out}; mkdir -p "$OUT"
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so MYNS_REQUIRE_CUDA=1
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "test_decode_streaming_and_register_builds" > $OUT/decode-rows64.log 2>&1; echo "decode rc $?"; tail -1 $OUT/decode-rows64.log
sel="test_decode_streaming_and_register_builds and (skinny_tma-bf16 or skinny_tma4-tf32 or skinny_tma8/2-f16)"
timeout 150 compute-sanitizer --tool memcheck python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "$sel" > $OUT/memcheck-rows64.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck-rows64.log | tail -2
for set in rows64 rows32; do
  mkdir -p $OUT/$set; timeout 240 python3 bench/explore/decode-split/split.py --rounds 3 --set $set --out $OUT/$set > $OUT/$set.txt 2>&1; echo "$set rc $?"
done
