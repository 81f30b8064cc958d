#!/usr/bin/env bash
# The register-A TF32 kernel with one wgmma group per k-step (RS_PENDING of
# them in flight) against the library before it (one group per k-tile), on
# the GPU machine from the repo root: libraries in build/mmab/{base,p2,p1}.so.xz
# (base: 4955e1c; p2 / p1: MYNS_RS_PENDING 2 / 1; e3: p2 with the next
# tile's first fragments loaded after the last k-step's wgmma; h: e3 for
# tiles 128 wide and up only). SWEEP_ROUNDS > 0: first the forced tile
# widths of `matmul_variants.py --only kstep`, the libraries interleaved.
# Then the TF32 and register-A GPU tests on $TEST_LIB.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
D=build/mmab
for l in ${LIBS:-base p2 p1}; do [ -f $D/$l.so ] || xz -dk $D/$l.so.xz; done
for r in $(seq 1 ${SWEEP_ROUNDS:-0}); do
  for l in ${LIBS:-base p2 p1}; do
    mkdir -p $OUT/sweep-$l-$r; MYNS_LIBRARY=$PWD/$D/$l.so PYTHONPATH=$PWD/python_loader timeout 120 python3 bench/explore/matmul_variants.py --out $OUT/sweep-$l-$r --only kstep > $OUT/sweep-$l-$r.log 2>&1
  done
done
(cd $OUT && ls sweep-*.log >/dev/null 2>&1 && tar czf sweep.tgz sweep-* && rm -rf sweep-*)
LIBS=${LIBS:-base p2 p1} AB_KINDS=tf32 AB_ONLY=${AB_ONLY:-square,llm,decode} AB_ROUNDS=${AB_ROUNDS:-3} bash bench/explore/matmul-ab/run.sh
export PYTHONPATH=$PWD/python_loader MYNS_REQUIRE_CUDA=1 MYNS_LIBRARY=$PWD/build/mmab/${TEST_LIB:-p2}.so
timeout 240 python3 -m pytest -q -p no:cacheprovider -m cuda -k "tf32 or wgr" tests/python/test_matmul_kernels.py tests/python/test_cuda_paths.py tests/python/test_bmm.py > $OUT/pytest-${TEST_LIB:-p2}.log 2>&1
tail -4 $OUT/pytest-${TEST_LIB:-p2}.log
