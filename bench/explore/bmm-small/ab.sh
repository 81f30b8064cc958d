#!/bin/bash
# A/B of .gpu/base.so against .gpu/libmyns.so (device run, repo root):
# ab.py with each library in turn, ROUNDS rounds, shape set SET (short or
# large), CALLS calls per kernel time. Writes $OUT/ab-$SET.log.
set -u
TL=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
export PYTHONPATH=$PWD/python_loader LD_LIBRARY_PATH=$TL:/usr/local/nvidia/lib64 PYTHONUNBUFFERED=1
for f in base libmyns; do [ -f .gpu/$f.so.xz ] && (cd .gpu && xz -d -k -f $f.so.xz); done
for r in $(seq ${ROUNDS:-2}); do
  for lib in base libmyns; do
    MYNS_LIBRARY=$PWD/.gpu/$lib.so timeout 250 python3 bench/explore/bmm-small/ab.py --tag "$lib/$r" --set ${SET:-short} --calls ${CALLS:-40} 2>&1 | grep -v Warn
  done
done | tee $OUT/ab-${SET:-short}.log
