#!/usr/bin/env bash
# Device run: pairs (c2) or single blocks (c1) on the 256- and 192-wide
# tiles for x @ W^T by rows (matmul_kernel_times.py --set pairs), library
# ${LIB:-.gpu/libmyns.so}.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LIB=${LIB:-.gpu/libmyns.so}; [ -f $LIB ] || xz -dk $LIB.xz
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/$LIB
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
for r in $(seq 1 ${ROUNDS:-1}); do echo "=== round $r" >> $OUT/pairs.log; timeout 400 python3 bench/explore/matmul_kernel_times.py --calls 10 --set ${SET:-pairs} --variants ${VARIANTS:-wg256c1,wg256c2,wg192c1,wg192c2} 2>&1 | grep -v -i warn >> $OUT/pairs.log; done
grep -v '^   ' $OUT/pairs.log
