#!/bin/bash
# The H200's below-target matmul rows (2026-11-28): forced variants around
# the automatic choice, and per-kernel times beside cuBLAS's.
#   device: bash bench/explore/h200-gaps/run.sh   (bundle in .gpu/, results in $OUT)
set -u
cd .gpu && xz -d -k -f libmyns.so.xz; cd ..
TL=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64
R=$OUT/h200-gaps; mkdir -p $R/var
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $R/gpu.txt
timeout 300 python3 bench/explore/matmul_variants.py --only h200gaps --out $R/var > $R/variants.log 2>&1
timeout 150 python3 bench/explore/matmul_kernel_times.py --set default > $R/kernel-times-default.log 2>&1
timeout 100 python3 bench/explore/matmul_kernel_times.py --set m128 > $R/kernel-times-m128.log 2>&1
tar -C $OUT -czf $OUT/h200-gaps.tgz h200-gaps
