#!/usr/bin/env bash
# The H100 run for rope's loop-free kernel (2026-11-27), from the repository
# root with build/rope carried: the new library (libmyns.so.xz), the cubins
# of rope_variants.sh (base.cubin: the kernel of 2f69311; flat.cubin:
# rope_flat.cu) and the Liger-Kernel 0.8.5 wheel. Writes to $OUT:
#   rope-tests.txt     every rope test (pytest -k rope), CUDA required
#   rope-memcheck.txt  compute-sanitizer memcheck over the CUDA rope tests
#   rope-inplace.txt   rope_inplace.py: the library (new kernel) against the
#                      old kernel, the flat variants and Liger's rope
#   bench/             bench/run.py --only rowwise --rowwise-ops rope
set -uo pipefail
OUT=${OUT:-/tmp/rope-run}
mkdir -p "$OUT"
[ -f build/rope/libmyns.so ] || xz -dk build/rope/libmyns.so.xz
python3 -m pip install -q --no-index --no-deps --target /tmp/site build/rope/liger_kernel-*.whl
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64 PYTHONUNBUFFERED=1
export MYNS_LIBRARY=$PWD/build/rope/libmyns.so PYTHONPATH=$PWD/python_loader:/tmp/site
MYNS_REQUIRE_CUDA=1 python3 -m pytest -q -p no:cacheprovider tests/python -k rope 2>&1 | tail -4 | tee "$OUT/rope-tests.txt"
MYNS_REQUIRE_CUDA=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_training_ops.py -k "rope and cuda" 2>&1 | tail -4 | tee "$OUT/rope-memcheck.txt"
echo "memcheck exit ${PIPESTATUS[0]}" | tee -a "$OUT/rope-memcheck.txt"
python3 bench/explore/rope/rope_inplace.py --cubins build/rope --rounds 9 2>&1 | grep -v "worst error" | tee "$OUT/rope-inplace.txt"
python3 bench/run.py --only rowwise --rowwise-ops rope --rowwise-no-compile --rounds 7 --max-out-pngs 0 \
  --results-dir "$OUT/bench" --tag h100 2>&1 | tail -30
