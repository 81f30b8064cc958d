# Sourced by this folder's device scripts (repository root, library in
# .gpu/): the loader, the library and torch's libraries on the path.
export PYTHONPATH=$PWD/python_loader MYNS_LIBRARY=$PWD/.gpu/libmyns.so LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))'):/usr/local/nvidia/lib64
[ -f .gpu/libmyns.so ] || xz -dk .gpu/libmyns.so.xz
