#!/usr/bin/env bash
# Session 2026-11-27 run 5: do the tests catch a wrong four-pack layer_norm? The library of cda88f1
# with one deliberate bug in layer_norm_r4_impl (the last pack of each thread loses its bias).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/bug.so ] || xz -dk $D/bug.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/bug.so MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm" 2>&1 > $OUT/pytest-bug.log
grep -E "^(FAILED|ERROR)" $OUT/pytest-bug.log | cut -c1-160 | head -40
tail -1 $OUT/pytest-bug.log
