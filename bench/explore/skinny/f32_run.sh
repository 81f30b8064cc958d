#!/usr/bin/env bash
# f32 skinny (bench/explore/skinny/README.md): decode benchmark rows, matmul/bmm tests, sanitizers over f32/tf32 (repo root on the GPU machine).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/new.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 150 python3 bench/bench_matmul.py --rounds 3 --only decode --out $OUT/decode > $OUT/decode.log 2>&1; echo "bench rc $?"
grep -E "^\| decode \| (tf32|f32)" $OUT/decode.log
status=0
timeout 330 python3 -m pytest -q -p no:cacheprovider ${TESTS_K:+-k "$TESTS_K"} tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tee $OUT/pytest.log | tail -4 || status=1
for tool in memcheck racecheck; do
  only=""; [ $tool = racecheck ] && only=--only-wg
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize $only --kinds=${SAN_KINDS:-f32} 2>&1 | tee $OUT/sanitize-$tool.log | tail -3 || status=1
done
exit $status
