#!/usr/bin/env bash
# Session 2026-11-27 run 3: layer_norm's r4 against its general build, forced (MYNS_ROW_KERNEL), new library in build/mmab/new.so.xz.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/new.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
t0=$SECONDS
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_llm_ops.py tests/python/test_cuda_paths.py tests/python/test_training_ops.py -k "four_pack or layer_norm" 2>&1 | tail -2 | tee $OUT/pytest-rows.log
echo "tests $((SECONDS-t0)) s"
A="--rowwise-shapes ${SHAPES} --rowwise-ops layer_norm --rowwise-budget-s 100 --rounds 5 --rowwise-no-compile"
for r in 1 2; do
for v in r4 general; do
  MYNS_ROW_KERNEL=$v timeout 150 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h100 > $OUT/row-$v-$r.log 2>&1
  grep -E "^ +(layer_norm|rms_norm)" $OUT/row-$v-$r.log | sed "s/^/$v /"
done
done
echo "total $((SECONDS-t0)) s"
