#!/bin/bash
# A/B of two accumulator sets on the 64-row tiles (ALT in
# kernels/matmul_sm90a.cu) on the H200: build/mmab/base.so (763dbde)
# against build/mmab/new.so, three interleaved rounds of the report's
# decode and square rows (bench/explore/matmul-ab/run.sh, with the matmul
# and bmm GPU tests on the new one), then kernel times at M = 128 with each.
set -u
export OUT=$OUT/alt; mkdir -p $OUT
AB_ONLY=decode,square TESTS=1 bash bench/explore/matmul-ab/run.sh > $OUT/ab.log 2>&1
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
for l in base new; do
  MYNS_LIBRARY=$PWD/build/mmab/$l.so timeout 100 python3 bench/explore/matmul_kernel_times.py --set m128 --variants wgh64/2,wgh128 2>&1 | grep -v Warn > $OUT/ktimes-$l.log
done
tar -C $(dirname $OUT) -czf $(dirname $OUT)/alt.tgz alt
