#!/usr/bin/env bash
# Runs on the GPU machine (torch 2.11 installed, no Rust) from the repo root,
# with .gpu/ made by scripts/gpu_bundle.sh. Builds nothing. Logs go to $OUT.
# Usage: bash scripts/gpu_run.sh [tests|bench|all]
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/myns-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
export PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in .gpu/bin/test_*; do
    echo "== $t"; "$t" 2>&1 | tee -a "$OUT/rust_tests.log" | tail -4 || status=1
  done
  echo "== example"; .gpu/bin/example_matmul 2>&1 | tee "$OUT/example.log" || status=1
  echo "== pytest"
  python3 -m pytest -q -p no:logging -p no:cacheprovider tests/python 2>&1 | tee "$OUT/pytest.log" | tail -15 || status=1
  echo "== demo"; python3 examples/demo.py 2>&1 | tee "$OUT/demo.log" | tail -14 || status=1
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # bench/run.py runs every bench/bench_*.py, the Rust per-call benchmark
  # (.gpu/bin/example_bench_add) included, and writes bench.json, bench.md and
  # PNGs to $OUT (which takes at most 8 files: no PNGs when the tests ran too).
  # The GPU copy has no .git: the commit comes from the bundle.
  export MYNS_GIT_COMMIT=${MYNS_GIT_COMMIT:-$(cat .gpu/COMMIT 2>/dev/null || echo unknown)}
  export MYNS_BENCH_ADD_BIN=$PWD/.gpu/bin/example_bench_add
  pngs=4; [ "$what" = all ] && pngs=0
  echo "== bench (commit $MYNS_GIT_COMMIT)"
  # No benchmark starts after BENCH_BUDGET_S seconds (the report says which were not run).
  python3 bench/run.py --max-out-pngs $pngs --budget-s "${BENCH_BUDGET_S:-200}" ${BENCH_ARGS:-} 2>&1 \
    | tee "$OUT/bench.log" | tail -120 || status=1
fi
exit $status
