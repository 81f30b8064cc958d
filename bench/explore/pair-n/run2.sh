#!/bin/bash
# Device run: pairs along N (MYNS_EXP_PAIR_N=1) against pairs along M and
# unpaired tiles over the shapes whose B k-lines are off 128 bytes
# (`--set pair64m`), two rounds; kernel times.
#   bash bench/explore/pair-n/run2.sh
set -u
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
[ -f .gpu/ab/pn.so ] || xz -dk .gpu/ab/pn.so.xz
export MYNS_LIBRARY=$PWD/.gpu/ab/pn.so
for r in 1 2; do
  timeout 150 python3 bench/explore/matmul_kernel_times.py --set pair64m --calls 40 --variants wg64,wg64c2,wg128,wg128c2 > $OUT/kt-pair64m-m-$r.log 2>&1
  MYNS_EXP_PAIR_N=1 timeout 150 python3 bench/explore/matmul_kernel_times.py --set pair64m --calls 40 --variants wg64c2,wg128c2 > $OUT/kt-pair64m-n-$r.log 2>&1
  echo "== round $r: plan, wg64, wg64c2 (along M), wg128, wg128c2 (along M), torch"; grep "per call" $OUT/kt-pair64m-m-$r.log | sed 's/ us per call.*//'
  echo "== round $r: pairs along N"; grep "c2: kernels" $OUT/kt-pair64m-n-$r.log | sed 's/ us per call.*//'
done
cd $OUT && tar czf logs.tgz *.log && rm -f kt-*.log
