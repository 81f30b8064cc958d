#!/bin/bash
# A/B of the consumers' descriptor arithmetic (desc_add) on the H200:
# build/mmab/base.so (fad4225's kernels) against build/mmab/new.so, three
# interleaved rounds of the report's square, llm, ragged, bmm and decode
# rows (bench/explore/matmul-ab/run.sh), kernel times of the mid-size set
# with each, (the GPU tests: a separate call).
set -u
export OUT=$OUT/desc; mkdir -p $OUT
AB_ONLY=square,llm,ragged,bmm,decode bash bench/explore/matmul-ab/run.sh > $OUT/ab.log 2>&1
D=build/mmab
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
for l in base new; do
  MYNS_LIBRARY=$PWD/$D/$l.so timeout 100 python3 bench/explore/matmul_kernel_times.py --set start 2>&1 | grep -v Warn > $OUT/ktimes-$l.log
done
MYNS_MATMUL_TMA_STORE=off MYNS_LIBRARY=$PWD/$D/new.so timeout 100 python3 bench/explore/matmul_kernel_times.py --set start 2>&1 | grep -v Warn > $OUT/ktimes-new-regstore.log
tar -C $(dirname $OUT) -czf $(dirname $OUT)/desc.tgz desc
