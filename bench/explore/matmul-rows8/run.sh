#!/usr/bin/env bash
# Session 2026-11-27 (third), tried and dropped (see bench/explore/README.md): a K-major a with unaligned rows (K = 4095, 32001,
# 50257) read in place by the Hopper kernels, 8 rows per TMA row (a_rows8),
# instead of through a padded copy. With .gpu (the new library) and
# build/rows8 (prev.so.xz: the library of d6fd3b3, whose matmul is that of
# fb06aee) carried: the matmul tests and memcheck over the new paths with
# the new library, then the unaligned class of bench_matmul.py, prev against
# new, interleaved processes (each also times torch.matmul in-process).
# The change itself: a_rows8.patch (git apply at ff238b1); it faults, see probe.sh.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=build/rows8
[ -f $D/prev.so ] || xz -dk $D/prev.so.xz
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/*.xz"):
    with lzma.open(f) as src, open(f[:-3], "wb") as dst:
        dst.write(src.read())
    os.remove(f)
PY
NEW=$PWD/.gpu/libmyns.so PREV=$PWD/$D/prev.so
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
MYNS_LIBRARY=$NEW timeout 330 python3 -m pytest -q -p no:cacheprovider --durations=5 tests/python/test_matmul_kernels.py tests/python/test_bmm.py \
  "tests/python/test_cuda_paths.py" -k "matmul or bmm or hopper or unaligned or edge or large or variants" > $OUT/pytest-matmul.log 2>&1
tail -12 $OUT/pytest-matmul.log
MYNS_LIBRARY=$NEW timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_matmul_kernels.py -k "unaligned_rows or edge_cases" > $OUT/memcheck.log 2>&1
echo "memcheck exit $?"; tail -3 $OUT/memcheck.log
for r in 1 2; do for v in prev new; do
  lib=$PREV; [ $v = new ] && lib=$NEW
  MYNS_LIBRARY=$lib timeout 120 python3 bench/bench_matmul.py --only unaligned --rounds 3 --out $OUT/mm-$v-$r > $OUT/mm-$v-$r.log 2>&1
  grep -E "unaligned|neighbour" $OUT/mm-$v-$r.log | sed "s/^/$v $r /"
done; done
