#!/usr/bin/env bash
# Session 2026-11-27 (later): bfloat16 layer_norm on rows of 16384 packs and more now takes the
# four-pack build (FourPack::OneWaveOrWide). With build/lnab carried (prev.so.xz: the library of
# d66bceb; new.so.xz: with the rule; the Liger-Kernel wheel): the row tests and memcheck over the
# CUDA layer_norm tests with the new library, then prev against new (automatic builds), interleaved.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/lnab
for l in prev new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
python3 -m pip install -q --no-index --no-deps --target /tmp/site $D/liger_kernel-*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader:/tmp/site MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
MYNS_LIBRARY=$PWD/$D/new.so timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm or row" 2>&1 | tail -2 | tee $OUT/pytest-rows.log
MYNS_LIBRARY=$PWD/$D/new.so timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider tests/python/test_training_ops.py tests/python/test_cuda_paths.py -k "(layer_norm or four_pack) and cuda" 2>&1 | tail -3 | tee $OUT/memcheck.log
A="--rowwise-shapes 1024x16384:bf16,2048x16384:bf16,8192x16384:bf16,2048x32768:bf16,8192x8192:bf16,2048x16384:f16 --rowwise-ops layer_norm --rowwise-budget-s 80 --rounds 5 --rowwise-no-compile"
for r in 1 2; do for v in prev new; do
  MYNS_LIBRARY=$PWD/$D/$v.so timeout 120 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h100 > $OUT/row-$v-$r.log 2>&1
  grep -E "^\| layer_norm" $OUT/row-$v-$r/h100.md | sed "s/^/$v $r /"
done; done
