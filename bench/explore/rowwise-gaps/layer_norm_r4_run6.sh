#!/usr/bin/env bash
# Session 2026-11-27 run 6 (review): pack_acc<true> now re-reads floats through a volatile move (rows.cuh),
# which changes rms_norm's float32 r4 code; layer_norm's r4 code is byte-identical. Row tests with the new
# library, then rms_norm float32 on its r4 shapes, prev (cda88f1) against new, interleaved.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
for l in prev new; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
MYNS_LIBRARY=$PWD/$D/new.so timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm or rms or forward_builds or row" 2>&1 | tail -2 | tee $OUT/pytest-rows.log
A="--rowwise-shapes 1024x4096:f32,512x8192:f32,16384x8192:f32 --rowwise-ops rms_norm --rowwise-budget-s 60 --rounds 5 --rowwise-no-compile"
for r in 1 2; do for v in prev new; do
  MYNS_LIBRARY=$PWD/$D/$v.so timeout 100 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h100 > $OUT/row-$v-$r.log 2>&1
  grep -E "^ +rms_norm" $OUT/row-$v-$r.log | sed "s/^/$v /"
done; done
