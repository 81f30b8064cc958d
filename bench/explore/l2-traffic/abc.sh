#!/usr/bin/env bash
# Device run (build/mmab carried): the libraries base (the bundle of
# 2c0cc63), new1 (a1b6901: the product kernels' tensor maps with 128-byte L2
# promotion instead of 256) and new2 (a1389d0: new1, and staged copies' rows
# of 1024 bytes and more padded to 128 bytes instead of 16), alternated three times
# over every class of bench_matmul.py (one round each); then, with TESTS=1,
# the matmul and bmm tests with new2, and with REPORT=1 the matmul report
# (5 rounds) with new1 and new2.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=build/mmab
LIBS=${LIBS:-base new1 new2}
for l in $LIBS; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
for r in 1 2 3; do
  for l in $LIBS; do
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 120 python3 bench/bench_matmul.py --rounds 1 --out "$OUT/ab-$l-$r" > "$OUT/ab-$l-$r.log" 2>&1 || echo "ab $l $r: exit $?"
  done
done
python3 bench/explore/pair192/summary.py --ab "$OUT" > "$OUT/ab-summary.txt"
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/new2.so MYNS_REQUIRE_CUDA=1 timeout 240 python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tail -3 | tee "$OUT/pytest-new2.log"
fi
if [ -n "${REPORT:-}" ]; then
  for l in new1 new2; do
    MYNS_GIT_COMMIT=$(cat $D/$l.commit) MYNS_LIBRARY=$PWD/$D/$l.so timeout 120 python3 bench/bench_matmul.py --rounds 5 --out "$OUT/mm-$l" \
      --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > "$OUT/mm-$l.log" 2>&1 || echo "report $l: exit $?"
  done
fi
