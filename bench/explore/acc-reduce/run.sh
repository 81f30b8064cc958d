#!/usr/bin/env bash
# Device run: the accumulate epilogue through TMA's reduce-add store
# (library build/mmab/acc.so) against 16d17cb's (build/mmab/cur.so, the bundle's library): FLCE
# forward + backward alternated three times, then the matmul/bmm tests
# and FLCE's tests with the new library.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in build/mmab/cur.so.xz build/mmab/acc.so.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
for r in 1 2 3; do
  for L in base acc; do
    lib=$PWD/build/mmab/cur.so; [ $L = acc ] && lib=$PWD/build/mmab/acc.so
    MYNS_LIBRARY=$lib timeout 100 python3 bench/explore/acc-reduce/flce_ab.py $L 2>&1 | grep -v -i warn | tee -a $OUT/flce.log
  done
done
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/build/mmab/acc.so MYNS_REQUIRE_CUDA=1 timeout 330 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py tests/python/test_training_ops.py -k "matmul or bmm or acc or fused_linear" 2>&1 | tail -6 | tee $OUT/pytest.log
fi
