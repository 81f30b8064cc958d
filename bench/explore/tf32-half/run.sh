#!/usr/bin/env bash
# The register-A TF32 kernel ping-pong on 64-row tiles (`wgrh128`, `wgrh64`)
# against the automatic choice, on the GPU machine from the repo root:
# libraries in build/mmab/<name>.so.xz. `matmul_variants.py --only tf32h`
# SWEEPS times per library (LIBS, interleaved), then (TEST_LIB set) the
# TF32 and register-A GPU tests on TEST_LIB.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
D=build/mmab
for l in ${LIBS:-new} ${TEST_LIB:-}; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
for r in $(seq 1 ${SWEEPS:-2}); do
  for l in ${LIBS:-new}; do
    MYNS_LIBRARY=$PWD/$D/$l.so timeout 150 python3 bench/explore/matmul_variants.py --out $OUT/sweep-$l-$r --only ${ONLY:-tf32h} > $OUT/sweep-$l-$r.log 2>&1
  done
done
if [ -n "${TEST_LIB:-}" ]; then
  MYNS_LIBRARY=$PWD/$D/$TEST_LIB.so MYNS_REQUIRE_CUDA=1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider -m cuda -k "tf32 or wgr" \
    tests/python/test_matmul_kernels.py tests/python/test_cuda_paths.py tests/python/test_bmm.py > $OUT/pytest-$TEST_LIB.log 2>&1
  tail -2 $OUT/pytest-$TEST_LIB.log
fi
