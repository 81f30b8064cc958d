#!/usr/bin/env bash
# Device run (repository root, build/mmab carried): the libraries base
# (a361cc1) and new (a361cc1 with early-release.patch: the Hopper kernel's
# consumers free the previous stage before waiting for a stage that has not
# landed, instead of after issuing its wgmmas), alternated three times:
# - kernel times of the `release` set (../matmul_kernel_times.py, automatic
#   choice);
# - with AB_ROUNDS=n, bench_matmul.py's classes AB_ONLY (one round per
#   library per round; ../pair192/summary.py --ab);
# then, with TESTS=1, the matmul and bmm tests with the new library.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
D=build/mmab
for l in base new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
for r in 1 2 3; do
  for l in base new; do
    echo "=== $l round $r"
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 150 python3 bench/explore/matmul_kernel_times.py --set ${KSET:-release} --calls 20 2>&1 | grep -v Warn
  done
done > "$OUT/ktimes.log" 2>&1
python3 bench/explore/pair192/summary.py "$OUT/ktimes.log" | tee "$OUT/ktimes-summary.txt"
for r in $(seq 1 ${AB_ROUNDS:-0}); do
  for l in base new; do
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 200 python3 bench/bench_matmul.py --rounds 1 --only ${AB_ONLY:-square,llm,ragged,bmm,unaligned,lm_head} --out "$OUT/ab-$l-$r" > "$OUT/ab-$l-$r.log" 2>&1
  done
done
[ "${AB_ROUNDS:-0}" -gt 0 ] && python3 bench/explore/pair192/summary.py --ab "$OUT" | tee "$OUT/ab-summary.txt"
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/new.so MYNS_REQUIRE_CUDA=1 timeout ${TESTS_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tail -4 | tee "$OUT/pytest.log"
fi
# At most 8 files come back from a device call: everything in one tarball.
cd "$OUT" && tar czf /tmp/results.tgz . && rm -rf ./* && mv /tmp/results.tgz . && ls
