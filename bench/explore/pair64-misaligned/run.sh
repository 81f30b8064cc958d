#!/bin/bash
# 64-wide tiles in pairs where B's k-lines are not 128-byte aligned
# (device run, repo root, the bundle in .gpu/): kernel times of the
# `pair64m` set with the 64- and 128-wide tiles alone and in pairs, two
# rounds. Writes $OUT/pair64m-<round>.log.
set -u
TL=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=${MYNS_LIBRARY:-$PWD/.gpu/libmyns.so} LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64 PYTHONUNBUFFERED=1
for r in 1 2; do
  timeout 200 python3 bench/explore/matmul_kernel_times.py --set pair64m --calls 40 --variants ${VARIANTS:-wg64,wg64c2,wg128,wg128c2,wgh128c2} 2>&1 | grep -v Warn > $OUT/pair64m-$r.log
done
