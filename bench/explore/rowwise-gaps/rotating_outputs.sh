#!/usr/bin/env bash
# The check behind rowwise-rotating-outputs-h100.log: the row-op benchmark as
# it is (outputs rotating) and as it was (build/mmab/bench_old: bench/ of
# 7a9b247, whose run failed there for want of tests/python on its path, so
# only the new half ran), with build/mmab/new.so and the Liger wheel in
# build/mmab/whl, on the GPU machine from the repo root.
# Row-op A/B of the benchmark method (outputs kept or not), same library.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/mmab
[ -f $D/new.so ] || xz -dk $D/new.so.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/new.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $D/whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
A="--rowwise-shapes ${SHAPES:-1024x2048:bf16,8192x512:bf16,64x16384:bf16,1024x8192:bf16,32768x512:bf16} --rowwise-ops ${OPS:-fused_add_rms_norm,add_rms_norm,rms_norm,softmax,silu_and_mul} --rowwise-budget-s 150 --rounds 5"
for v in new old; do
  dir=bench; [ $v = old ] && dir=$D/bench_old
  timeout 270 python3 $dir/run.py --only rowwise $A --results-dir $OUT/$v --tag h100 > $OUT/row-$v.log 2>&1
  grep -E "^ +(fused_add|add_rms|rms_norm|softmax|silu|rope)" $OUT/row-$v.log | sed "s/^/$v /"
done
