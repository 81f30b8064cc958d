#!/usr/bin/env bash
# 2026-11-29: layer_norm on rows of 8192 16-bit elements at many rows, on the
# H200 (the report at 430acaf: bf16 8192 x 8192 at 0.92 of compiled, 3.37
# TB/s, on the general build), automatic build against r4 and r2 forced
# (MYNS_ROW_KERNEL), interleaved in separate processes; the bundle in .gpu/
# and the Liger-Kernel wheel in .whl/. OPS, SHAPES, BUILDS and ROUNDS
# choose other ops, shapes, forced builds and round counts.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
[ -f .gpu/libmyns.so ] || (cd .gpu && xz -dk libmyns.so.xz)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/liger_kernel-*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader:/tmp/site MYNS_LIBRARY=$PWD/.gpu/libmyns.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
A="--rowwise-shapes ${SHAPES:-2048x8192:bf16,4096x8192:bf16,8192x8192:bf16,16384x8192:bf16,8192x8192:f16,4096x4096:bf16} --rowwise-ops ${OPS:-layer_norm} --rowwise-budget-s 60 --rounds 5 --rowwise-no-compile"
for r in $(seq 1 ${ROUNDS:-2}); do for v in ${BUILDS:-auto r4 r2}; do
  if [ $v = auto ]; then unset MYNS_ROW_KERNEL; else export MYNS_ROW_KERNEL=$v; fi
  timeout 100 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h200 > $OUT/row-$v-$r.log 2>&1
  grep -E "^\| (${OPS//,/|})" $OUT/row-$v-$r/h200.md | sed "s/^/$v-$r /" | tee -a $OUT/summary.txt
done; done
