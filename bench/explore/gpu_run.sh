#!/usr/bin/env bash
# Runs on the GPU machine from a bundle made by bench/explore/bundle.sh
# (the library, the Python loader, the matmul tests and benchmarks):
#   bash bench/explore/gpu_run.sh <step>...   steps: explore, tests, sanitize, bench, ncu
# (TESTS_K: a pytest -k filter; SAN_TOOLS, SAN_KINDS: which sanitizers, which
# kinds' variants; NCU_CASES, NCU_KERNELS, NCU_STALLS (stall reasons): see
# the ncu step)
# Logs and results go to $OUT (at most 8 files come back).
set -uo pipefail
cd "$(dirname "$0")"/../..   # the bundle's root
OUT=${OUT:-/tmp/myns-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/libmyns.so PYTHONPATH=$PWD/python_loader
export MYNS_GIT_COMMIT=$(cat COMMIT 2>/dev/null || echo unknown)
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
status=0
for step in "$@"; do
  echo "== $step (commit $MYNS_GIT_COMMIT) $(date +%T)"
  case $step in
    explore) timeout 300 python3 bench/explore/matmul_variants.py --out "$OUT" 2>&1 | tee "$OUT/explore.log" | tail -5 || status=1 ;;
    tests) timeout ${TESTS_TIMEOUT_S:-420} python3 -m pytest -q -p no:cacheprovider ${TESTS_K:+-k "$TESTS_K"} tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 \
             | tee "$OUT/pytest.log" | tail -25 || status=1 ;;
    sanitize)
      for tool in ${SAN_TOOLS:-memcheck racecheck}; do
        only=""; [ $tool = racecheck ] && [ -z "${SAN_KINDS:-}" ] && only=--only-wg
        timeout ${SAN_TIMEOUT_S:-240} compute-sanitizer --tool $tool --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize $only ${SAN_KINDS:+--kinds=$SAN_KINDS} 2>&1 \
          | tee "$OUT/sanitize-$tool.log" | tail -4 || status=1
      done ;;
    bench) timeout ${BENCH_TIMEOUT_S:-500} python3 bench/bench_matmul.py --out "$OUT" --command "python3 bench/bench_matmul.py --rounds 3" 2>&1 | tee "$OUT/bench.log" | tail -70 || status=1 ;;
    ncu)
      # NCU_CASES: "who M K N dtype" entries separated by ';' (bench/explore/ncu_matmul.py);
      # NCU_KERNELS: the kernel-name regex.
      IFS=';' read -ra cases <<< "${NCU_CASES:-myns 4096 4096 4096 bf16;torch 4096 4096 4096 bf16}"
      for c in "${cases[@]}"; do
        set -- $c
        timeout 180 ncu --kernel-name regex:"${NCU_KERNELS:-mm_|nvjet|gemm}" --launch-skip 2 --launch-count 1 \
          --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
          --section LaunchStats --section Occupancy --section InstructionStats \
          ${NCU_STALLS:+--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio} \
          python3 bench/explore/ncu_matmul.py $c 2>&1 \
          | tee "$OUT/ncu-$1-$2x$3x$4-$5.txt" | grep -E "Duration|Issue Slots|Eligible|Registers|Executed Ipc A" || status=1
      done ;;
  esac
done
exit $status
