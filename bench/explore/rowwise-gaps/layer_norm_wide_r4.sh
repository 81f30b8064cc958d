#!/usr/bin/env bash
# Session 2026-11-27 (later): layer_norm on rows of 12288 and 16384 16-bit elements, which take the
# general build (2048 x 16384 bf16 was 0.89 of Liger's in layer_norm_loads_ab.sh), against the
# four-pack build forced (MYNS_ROW_KERNEL=r4), in separate processes, interleaved; with build/lnab
# carried (prev.so.xz: the library of d66bceb; the Liger-Kernel wheel).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/lnab
[ -f $D/prev.so ] || xz -dk $D/prev.so.xz
python3 -m pip install -q --no-index --no-deps --target /tmp/site $D/liger_kernel-*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader:/tmp/site MYNS_LIBRARY=$PWD/$D/prev.so
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
A="--rowwise-shapes 1024x16384:bf16,2048x16384:bf16,4096x16384:bf16,8192x16384:bf16,2048x16384:f16,2048x12288:bf16,8192x12288:bf16 --rowwise-ops layer_norm --rowwise-budget-s 80 --rounds 5 --rowwise-no-compile"
for r in 1 2; do for v in auto r4; do
  if [ $v = r4 ]; then export MYNS_ROW_KERNEL=r4; else unset MYNS_ROW_KERNEL; fi
  timeout 120 python3 bench/run.py --only rowwise $A --results-dir $OUT/row-$v-$r --tag h100 > $OUT/row-$v-$r.log 2>&1
  grep -E "^\| layer_norm" $OUT/row-$v-$r/h100.md | sed "s/^/$v $r /"
done; done
