#!/usr/bin/env bash
# A tile's K ranges as the blocks of one cluster (forced `k2`, `k4`), on the
# GPU machine from the repo root, library build/mmab/$LIB.so.xz: the new
# variants through the Hopper test sweep (matmul, bmm, accumulate), then
# `matmul_variants.py --only kclus` SWEEPS times.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
D=build/mmab; LIB=${LIB:-kc}
[ -f $D/$LIB.so ] || xz -dk $D/$LIB.so.xz
export MYNS_LIBRARY=$PWD/$D/$LIB.so MYNS_REQUIRE_CUDA=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
if [ "${CHECK:-1}" = 1 ]; then
  timeout ${CHECK_S:-240} python3 - > $OUT/check-$LIB.log 2>&1 <<'PY'
import sys
sys.path.insert(0, "tests/python")
import test_matmul_kernels as t
t.VARIANTS = {"bf16": ["wg64k2", "wg128k4", "wg192k2"], "f16": ["wg64k4", "wg192k2"], "tf32": ["wgr128k2", "wgr64k4", "wg128k2"]}
t.ACC_VARIANTS = {"bf16": ["wg64k2"], "f16": ["wg128k2"], "tf32": ["wgr128k4"]}
t.HOPPER = {v for d in (t.VARIANTS, t.ACC_VARIANTS) for vs in d.values() for v in vs}
t.hopper_sweep()
print("check ok")
PY
  echo "check rc $?"; tail -3 $OUT/check-$LIB.log
fi
for r in $(seq 1 ${SWEEPS:-2}); do
  mkdir -p $OUT/s$r; timeout 150 python3 bench/explore/matmul_variants.py --out $OUT/s$r --only ${ONLY:-kclus} > $OUT/sweep-$LIB-$r.log 2>&1
  echo "sweep $r rc $?"
done
