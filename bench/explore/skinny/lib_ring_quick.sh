#!/usr/bin/env bash
# Device check of a library in .gpu/ (libmyns.so.xz): the decode and skinny matmul tests, the `ring` group of
# bench/explore/matmul_variants.py, and (BENCH=1) the matmul report. The ring-h200-{94d7114,f0b6a5e,6fb7329}.txt runs.
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so
TL=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))'); export LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64
(cd .gpu && xz -d -k -f libmyns.so.xz)
MYNS_REQUIRE_CUDA=1 timeout 200 python3 -m pytest -q -x tests/python/test_matmul_kernels.py -k "decode or skinny" 2>&1 | tail -2
timeout 90 python3 bench/explore/matmul_variants.py --only ${GROUPS_ONLY:-ring} --out $OUT > $OUT/ring.txt 2>&1; grep -E "${RING_GREP:-auto}" $OUT/ring.txt
if [ -n "${BENCH:-}" ]; then
  MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 150 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1
  tail -3 $OUT/mm.out
fi
