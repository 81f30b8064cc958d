#!/usr/bin/env bash
# Device run (2026-11-29): the library with the streaming skinny build on its
# rings (16, 8 and 4 stages; c0132e0 had the first two). The CUDA matmul
# tests with the four sanitizers (scripts/gpu_run.sh test-gpu), the `ring`
# group of bench/explore/matmul_variants.py (each ring forced, float32 and
# bf16, beside the automatic choice), and the matmul report. Needs .gpu/ (make
# gpu-bundle). Everything lands in $OUT, the bulky parts as tarballs.
set -uo pipefail
O=${OUT:-/tmp/ring-out}; mkdir -p "$O"
OUT=$O/tg PYTEST_K="${PYTEST_K:-matmul or bmm or cuda_paths or linear}" timeout 430 bash scripts/gpu_run.sh test-gpu > "$O/tg.out" 2>&1
echo "test-gpu exit $?"; tail -22 "$O/tg.out"
(cd "$O" && tar czf tg.tgz tg && rm -rf tg)
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so
TL=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64
timeout 60 python3 bench/explore/matmul_variants.py --only ring --out "$O" > "$O/ring.txt" 2>&1; tail -32 "$O/ring.txt"
[ -n "${SKIP_BENCH:-}" ] && exit 0
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 150 python3 bench/bench_matmul.py --rounds 5 --out "$O/mm" \
  --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > "$O/mm.out" 2>&1
echo "bench exit $?"; tail -4 "$O/mm.out"
(cd "$O" && tar czf mm.tgz mm)
