#!/usr/bin/env bash
# Session 2026-11-27 run 4: the row tests with layer_norm float64 back on the general build unless forced.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/new.so MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm or forward_builds or row" 2>&1 | tail -3 | tee $OUT/pytest-rows.log
