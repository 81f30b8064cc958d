#!/usr/bin/env bash
# Session 2026-11-27 run 2: layer_norm prev (039c9dc) vs the bundle (.gpu), more shapes.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/prev.so ] || xz -dk $D/prev.so.xz
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
A="--rowwise-shapes ${SHAPES} --rowwise-ops ${OPS:-layer_norm} --rowwise-budget-s 150 --rounds 5"
for v in prev new; do
  lib=$PWD/$D/prev.so; [ $v = new ] && lib=$PWD/.gpu/libmyns.so
  MYNS_LIBRARY=$lib timeout 250 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v --tag h100 > $OUT/row-$v.log 2>&1
  grep -E "^ +(layer_norm|rms_norm)" $OUT/row-$v.log | sed "s/^/$v /"
done
