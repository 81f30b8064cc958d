# Device run (from the repository root, library in .gpu/): interleave.py.
set -u
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
timeout 300 python3 bench/explore/tf32-llm/interleave.py --set ${SET:-pairs} --rounds 5 --calls 10 2>&1 | grep -v -i "warn" | tee $OUT/interleave-${SET:-pairs}.log
