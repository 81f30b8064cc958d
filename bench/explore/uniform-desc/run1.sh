#!/bin/bash
# Device run (libraries in .gpu/ab/<name>.so.xz, results in $OUT): kernel
# times of each library's matmul, processes interleaved, three rounds.
#   bash bench/explore/uniform-desc/run1.sh base u1
set -u
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
for v in "$@"; do [ -f .gpu/ab/$v.so ] || xz -dk .gpu/ab/$v.so.xz; done
for r in 1 2 3; do
  for set in kc1024 default pipe; do
    for v in "$@"; do
      MYNS_LIBRARY=$PWD/.gpu/ab/$v.so timeout 100 python3 bench/explore/matmul_kernel_times.py --set $set --calls 40 > $OUT/kt-$set-$v-$r.log 2>&1
      echo "== $set $v round $r"; grep "per call" $OUT/kt-$set-$v-$r.log
    done
  done
done
