#!/bin/bash
# Pairs on the 64-row and 64-wide tiles (--only pairs64), H200, library in
# $LIB_DIR (default .gpux, an exploration build), twice, then kernel times
# of the M = 128 and 1024^3 shapes with those variants.
set -u
D=${LIB_DIR:-.gpux}
cd $D && xz -d -k -f libmyns.so.xz; cd ..
TL=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$D/libmyns.so LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64
R=$OUT/pairs64; mkdir -p $R/var1 $R/var2
timeout 200 python3 bench/explore/matmul_variants.py --only pairs64 --out $R/var1 > $R/variants1.log 2>&1
timeout 200 python3 bench/explore/matmul_variants.py --only pairs64 --out $R/var2 > $R/variants2.log 2>&1
timeout 120 python3 bench/explore/matmul_kernel_times.py --set m128 --variants wgh64c2,wgh64c2/2,wg64c2,wgh128c2 > $R/kernel-times-m128.log 2>&1
tar -C $OUT -czf $OUT/pairs64.tgz pairs64
