#!/usr/bin/env bash
# Runs on the GPU machine (torch 2.11 installed, no Rust, no network) from the
# repo root, with .gpu/ made by scripts/gpu_bundle.sh (and .whl/ for the
# benchmarks' Liger-Kernel baseline). Builds nothing. Logs go to $OUT.
# Usage: bash scripts/gpu_run.sh [test-gpu|tests|bench|all]
#   test-gpu  what `make test-gpu` runs: every CUDA test with MYNS_REQUIRE_CUDA=1
#             (a CUDA test that cannot run FAILS), the Rust test binaries, and
#             compute-sanitizer memcheck, racecheck, initcheck and synccheck
#             over tests/gpu/sanitize_workload.py; about 8 minutes on an H100
#             (PYTEST_K: only the CUDA tests this pytest -k expression selects)
#   tests     the Rust test binaries, the example, the whole pytest suite, the demo
#   bench     bench/run.py (every benchmark; report to $OUT)
#   wheel     the bundle's wheel installed into a fresh virtualenv that sees
#             the machine's torch, and ops run on CPU and CUDA
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/myns-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so
export PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
# The GPU copy has no .git: the commit comes from the bundle.
export MYNS_GIT_COMMIT=${MYNS_GIT_COMMIT:-$(cat .gpu/COMMIT 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
# The bundle's library and binaries come xz-compressed (scripts/gpu_bundle.sh).
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/bin/*.xz") + glob.glob(".gpu/*.xz"):
    with lzma.open(f) as src, open(f[:-3], "wb") as dst:
        dst.write(src.read())
    os.chmod(f[:-3], 0o755)
    os.remove(f)
PY
status=0

# tests/c_abi.rs runs a C program that finds libtorch through the library's
# run path ($ORIGIN/../torch/lib, the pip-installed layout): give it one.
installed_layout() {
  local site=/tmp/myns-site
  mkdir -p "$site/myns"
  cp .gpu/libmyns.so "$site/myns/"
  ln -sfn "$(dirname "$TORCH_LIB")" "$site/torch"
  export MYNS_LIB=$site/myns/libmyns.so
}

# One line per step in the summary: name, status, seconds.
step() {  # step <name> <log> <command...>
  local name=$1 log=$2 t0=$SECONDS rc
  shift 2
  echo "== $name"
  "$@" >"$log" 2>&1
  rc=$?
  echo "| $name | $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") | $((SECONDS - t0)) s |" >>"$SUMMARY"
  tail -5 "$log"
  return $rc
}

test_gpu() {
  export MYNS_REQUIRE_CUDA=1  # a skipped CUDA test fails (tests/python/conftest.py, tests/*.rs)
  local ngpu tmp=/tmp/myns-test-gpu t_all=$SECONDS
  ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
  rm -rf "$tmp" && mkdir -p "$tmp"
  SUMMARY=$OUT/test-gpu-summary.md
  {
    echo "# make test-gpu at $MYNS_GIT_COMMIT"
    echo
    echo "$(head -2 "$OUT/gpu.txt" | tail -1); $ngpu GPU(s); MYNS_REQUIRE_CUDA=1 MYNS_REQUIRE_GPUS=${MYNS_REQUIRE_GPUS:-0}${PYTEST_K:+; pytest -k \"$PYTEST_K\" only}; $(date -u +%FT%TZ)"
    echo
    echo "| step | result | time |"
    echo "| --- | --- | --- |"
  } >"$SUMMARY"
  installed_layout

  # The sanitizers run beside the tests (each is mostly CPU-bound
  # instrumentation; the machine has 16 cores). racecheck, initcheck and
  # synccheck take the light workload.
  local tool pids=()
  for tool in memcheck racecheck initcheck synccheck; do
    local light=--light
    [ $tool = memcheck ] && light=
    (
      t0=$SECONDS
      # initcheck does not see writes made by TMA stores, and calls the
      # matmul outputs stored so uninitialized: it runs on the register
      # stores (the other tools run the TMA ones).
      env_tma=; [ $tool = initcheck ] && env_tma=off
      MYNS_MATMUL_TMA_STORE=$env_tma timeout -k 10 "${SANITIZE_TIMEOUT_S:-420}" compute-sanitizer --tool $tool --error-exitcode 9 \
        python3 tests/gpu/sanitize_workload.py $light >"$tmp/$tool.log" 2>&1
      echo "$? $((SECONDS - t0))" >"$tmp/$tool.rc"
    ) &
    pids+=($!)
  done

  # Rust test binaries, one after the other, beside pytest.
  (
    for t in .gpu/bin/test_*; do
      echo "== $t"
      timeout -k 10 180 "$t" 2>&1 || echo "FAILED: $t (exit $?)"
    done >"$tmp/rust.log" 2>&1
    if grep -q "^FAILED: " "$tmp/rust.log"; then echo 1; else echo 0; fi >"$tmp/rust.rc"
  ) &
  local rust_pid=$!

  # Every CUDA test (the CPU ones run in CI). The out-of-memory test runs
  # last, alone: it fills the GPU, which would fail the sanitizer runs.
  step "pytest, CUDA tests" "$OUT/pytest.log" timeout -k 10 "${PYTEST_TIMEOUT_S:-565}" \
    python3 -m pytest -v -p no:cacheprovider -p no:logging --durations=30 -m "cuda or multi_gpu" \
    -k "not out_of_memory${PYTEST_K:+ and ($PYTEST_K)}" tests/python || status=1

  wait $rust_pid
  echo "| Rust test binaries | $([ "$(cat "$tmp/rust.rc")" = 0 ] && echo ok || echo FAILED) | beside pytest |" >>"$SUMMARY"
  [ "$(cat "$tmp/rust.rc")" = 0 ] || status=1
  cp "$tmp/rust.log" "$OUT/rust.log"

  for pid in "${pids[@]}"; do wait "$pid"; done
  : >"$OUT/sanitize.log"
  for tool in memcheck racecheck initcheck synccheck; do
    read -r rc secs <"$tmp/$tool.rc"
    { echo "===== compute-sanitizer --tool $tool (exit $rc, $secs s)"; cat "$tmp/$tool.log"; } >>"$OUT/sanitize.log"
    echo "| compute-sanitizer $tool | $([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)") | $secs s |" >>"$SUMMARY"
    [ "$rc" = 0 ] || status=1
    echo "== sanitizer $tool: exit $rc"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|workload ok|Error" "$tmp/$tool.log" | tail -3
  done

  step "pytest, out of memory" "$tmp/oom.log" python3 -m pytest -q -p no:cacheprovider -p no:logging \
    tests/python/test_cuda.py -k out_of_memory || status=1
  cat "$tmp/oom.log" >>"$OUT/pytest.log"

  if [ "$ngpu" -ge 2 ] || [ "${MYNS_REQUIRE_GPUS:-0}" -ge 2 ]; then
    step "torchrun DDP, 2 GPUs" "$tmp/ddp.log" timeout -k 10 180 torchrun --nproc-per-node 2 tests/gpu/ddp_train.py || status=1
    cat "$tmp/ddp.log" >>"$OUT/rust.log"
  else
    echo "| torchrun DDP, 2 GPUs | skipped: $ngpu GPU | |" >>"$SUMMARY"
  fi
  {
    echo
    echo "Total $((SECONDS - t_all)) s. $(grep -E '^(FAILED|ERROR) ' "$OUT/pytest.log" | wc -l) pytest failures;"
    grep -E "^=+ .*(passed|failed|error).* =+$" "$OUT/pytest.log" | tail -2
    echo
    echo "Logs: pytest.log, rust.log (and DDP), sanitize.log."
  } >>"$SUMMARY"
  cat "$SUMMARY"
}

if [ "$what" = test-gpu ]; then
  test_gpu
fi
if [ "$what" = wheel ]; then
  # No network: pip installs the wheel alone (--no-deps) into a fresh
  # folder, next to the machine's torch (its python3 is a venv of its own).
  rm -rf /tmp/myns-wheel-site
  python3 -m pip install -q --no-index --no-deps --target /tmp/myns-wheel-site .gpu/myns-*.whl 2>&1 | tee "$OUT/wheel.log"
  (cd /tmp && env -u MYNS_LIBRARY PYTHONPATH=/tmp/myns-wheel-site python3 -c '
import torch, myns
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
assert torch.equal(myns.add(x, x), 2 * x)
y = x.cuda()
assert torch.equal(myns.add(y, y).cpu(), 2 * x)
assert torch.allclose(myns.matmul(y, y.T).cpu(), x @ x.T)
assert myns.library_path().startswith("/tmp/myns-wheel-site/"), myns.library_path()
print(f"wheel ok: {myns.library_path()} with torch {torch.__version__} on CPU and {torch.cuda.get_device_name()}")
') 2>&1 | tee -a "$OUT/wheel.log" | tail -3
  grep -q "wheel ok" "$OUT/wheel.log" || status=1
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  installed_layout
  for t in .gpu/bin/test_*; do
    echo "== $t"; "$t" 2>&1 | tee -a "$OUT/rust_tests.log" | tail -4 || status=1
  done
  echo "== example"; .gpu/bin/example_matmul 2>&1 | tee "$OUT/example.log" || status=1
  echo "== pytest"
  python3 -m pytest -q -p no:logging -p no:cacheprovider tests/python 2>&1 | tee "$OUT/pytest.log" | tail -15 || status=1
  echo "== demo"; python3 examples/demo.py 2>&1 | tee "$OUT/demo.log" | tail -14 || status=1
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # Liger-Kernel (a baseline of bench_rowwise.py) is a pure-Python wheel,
  # carried in .whl/ (pip download liger-kernel==0.8.5 --no-deps -d .whl);
  # it uses the triton that is installed there.
  if ls .whl/liger_kernel-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      && export PYTHONPATH=$PYTHONPATH:/tmp/site || status=1
  else
    echo "no .whl/liger_kernel-*.whl: the Liger-Kernel baseline will be missing"
  fi
  # bench/run.py runs every bench/bench_*.py, the Rust per-call benchmark
  # (.gpu/bin/example_bench_add) included, and writes bench.json, bench.md and
  # PNGs to $OUT (which takes at most 8 files: no PNGs when the tests ran too).
  export MYNS_BENCH_ADD_BIN=$PWD/.gpu/bin/example_bench_add
  pngs=4; [ "$what" = all ] && pngs=0
  echo "== bench (commit $MYNS_GIT_COMMIT)"
  # No benchmark starts after BENCH_BUDGET_S seconds (the report says which were not run).
  python3 bench/run.py --max-out-pngs $pngs --budget-s "${BENCH_BUDGET_S:-200}" ${BENCH_ARGS:-} 2>&1 \
    | tee "$OUT/bench.log" | tail -120 || status=1
fi
exit $status
