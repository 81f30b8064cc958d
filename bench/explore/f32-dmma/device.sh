#!/usr/bin/env bash
# Device run (repository root, .gpu carried; `make gpu-bundle` of the change):
# `make test-gpu` (scripts/gpu_run.sh test-gpu), then the matmul report
# (bench_matmul.py, 5 rounds), all of it in one tarball: at most 8 files
# come back from a device call.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/tg" "$OUT/mm"
OUT=$OUT/tg timeout ${TG_TIMEOUT:-470} bash scripts/gpu_run.sh test-gpu > "$OUT/tg/run.log" 2>&1
echo "test-gpu exit $?" | tee -a "$OUT/tg/run.log"
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so
export LD_LIBRARY_PATH=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))'):/usr/local/nvidia/lib64
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 150 python3 bench/bench_matmul.py --rounds 5 --out "$OUT/mm" \
  --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > "$OUT/mm/run.log" 2>&1
echo "bench exit $?"
cd "$OUT" && tar czf /tmp/results.tgz . && rm -rf ./* && mv /tmp/results.tgz . && ls
