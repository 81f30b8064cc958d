#!/usr/bin/env bash
# Device run for 17-32 rows in the streaming build (ab1977e; library in
# .gpu/, 8d46929's as .gpu/base.so.xz: the tile kernels those rows ran on
# before): memcheck over the automatic decode test at 24 and 32 rows (the
# sanitizer workload has no skinny products), split.py's `midm` set on both
# libraries, the matmul report (to $OUT/mm.tgz), then racecheck if time is left.
set -uo pipefail
source bench/explore/tf32-llm/env.sh
OUT=${OUT:-/tmp/rows32-out}; mkdir -p "$OUT"
for f in libmyns base; do [ -f .gpu/$f.so ] || xz -dk .gpu/$f.so.xz; done
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so MYNS_REQUIRE_CUDA=1
sel="test_decode_streaming_and_register_builds and auto and (bf16 or tf32)"
timeout 150 compute-sanitizer --tool memcheck python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "$sel" > $OUT/memcheck-rows32.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck-rows32.log | tail -2
for L in libmyns base; do
  mkdir -p $OUT/midm-$L; timeout 100 env MYNS_LIBRARY=$PWD/.gpu/$L.so python3 bench/explore/decode-split/split.py --rounds 3 --set midm --out $OUT/midm-$L > $OUT/midm-$L.txt 2>&1; echo "midm $L rc $?"
done
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 150 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "mm rc $?"
(cd $OUT && tar czf mm.tgz mm && rm -rf mm)
timeout 90 compute-sanitizer --tool racecheck python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py -k "test_decode_streaming_and_register_builds and auto and bf16" > $OUT/racecheck-rows32.log 2>&1; echo "racecheck rc $?"; grep -E "RACECHECK SUMMARY|passed|failed" $OUT/racecheck-rows32.log | tail -2
