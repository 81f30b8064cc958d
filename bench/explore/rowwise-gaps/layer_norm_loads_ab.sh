#!/usr/bin/env bash
# Session 2026-11-27 (later): layer_norm's general forward build with 16-byte loads of w, b and re-read x
# (kernels/layer_norm.cu load_pack; NVVM had split them into 2-byte loads). With build/lnab carried
# (prev.so.xz: the library of d66bceb; new.so.xz: with the change; the Liger-Kernel wheel):
# the row tests and memcheck over the CUDA layer_norm tests with the new library, then the forward on
# shapes that take the general build, prev against new, interleaved in separate processes.
# Result (layer-norm-loads-h100.txt): bf16/f16 0.80x, float32 level; the change was not kept.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/lnab
for l in prev new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
python3 -m pip install -q --no-index --no-deps --target /tmp/site $D/liger_kernel-*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader:/tmp/site MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
MYNS_LIBRARY=$PWD/$D/new.so timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm or row" 2>&1 | tail -2 | tee $OUT/pytest-rows.log
MYNS_LIBRARY=$PWD/$D/new.so timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider tests/python/test_training_ops.py tests/python/test_cuda_paths.py -k "layer_norm and cuda" 2>&1 | tail -3 | tee $OUT/memcheck.log
A="--rowwise-shapes 4096x8192:bf16,8192x8192:bf16,16384x8192:bf16,8192x5120:bf16,2048x16384:bf16,8192x8192:f16,8192x8192:f32 --rowwise-ops layer_norm --rowwise-budget-s 80 --rounds 5 --rowwise-no-compile"
for r in 1 2; do for v in prev new; do
  MYNS_LIBRARY=$PWD/$D/$v.so timeout 120 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h100 > $OUT/row-$v-$r.log 2>&1
  grep -E "^\| layer_norm" $OUT/row-$v-$r/h100.md | sed "s/^/$v $r /"
done; done
