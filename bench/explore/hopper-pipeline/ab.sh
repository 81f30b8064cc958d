#!/usr/bin/env bash
# Device run: the Hopper kernel's start-up change, library `new` against
# `base` (build/mmab/): kernel times (profiler, 20 calls after an L2 flush
# each) alternating the two libraries twice, then (TESTS=1) the matmul and
# bmm tests with `new`.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
for L in base new; do rm -f build/mmab/$L.so; xz -dk build/mmab/$L.so.xz; done
for r in 1 2; do
  for L in base new; do
    echo "=== $L round $r" >> $OUT/ktimes.log
    MYNS_LIBRARY=$PWD/build/mmab/$L.so timeout 100 python3 bench/explore/matmul_kernel_times.py --calls 20 --set ${SET:-start} 2>&1 | grep -v -i warn | grep -v "^   " >> $OUT/ktimes.log
  done
done
cat $OUT/ktimes.log
if [ -n "${TESTS:-}" ]; then
  MYNS_LIBRARY=$PWD/build/mmab/new.so MYNS_REQUIRE_CUDA=1 timeout 330 python3 -m pytest -q -x -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py 2>&1 | tail -4 | tee $OUT/pytest.log
fi
