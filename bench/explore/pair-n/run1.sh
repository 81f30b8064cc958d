#!/bin/bash
# Device run (libraries in .gpu/ab/, results in $OUT): pairs along N
# sharing A (MYNS_EXP_PAIR_N=1 on `pn`) against pairs along M (wg64c2)
# and the plan; correctness first, then kernel times, three rounds.
#   bash bench/explore/pair-n/run1.sh
set -u
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
for v in pn; do [ -f .gpu/ab/$v.so ] || xz -dk .gpu/ab/$v.so.xz; done
export MYNS_LIBRARY=$PWD/.gpu/ab/pn.so
MYNS_EXP_PAIR_N=1 timeout 60 python3 bench/explore/pair-n/check.py wg64c2 > $OUT/check-pn.log 2>&1; cat $OUT/check-pn.log
timeout 60 python3 bench/explore/pair-n/check.py wg64c2 > $OUT/check-c2.log 2>&1; tail -1 $OUT/check-c2.log
grep -q "failures 0" $OUT/check-pn.log || exit 1
for r in 1 2 3; do
  for set in kc1024 pipe; do
    timeout 100 python3 bench/explore/matmul_kernel_times.py --set $set --calls 40 --variants wg64c2 > $OUT/kt-$set-m-$r.log 2>&1
    MYNS_EXP_PAIR_N=1 timeout 100 python3 bench/explore/matmul_kernel_times.py --set $set --calls 40 --variants wg64c2 > $OUT/kt-$set-n-$r.log 2>&1
    echo "== $set round $r: plan, wg64c2 (pairs along M), torch"; grep "per call" $OUT/kt-$set-m-$r.log
    echo "== $set round $r: pairs along N"; grep "c2: kernels" $OUT/kt-$set-n-$r.log
  done
done
cd $OUT && tar czf logs.tgz *.log && rm -f kt-*.log
