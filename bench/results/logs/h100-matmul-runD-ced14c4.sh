# Run D (bundle at ced14c4): `bash bench/explore/bundle.sh /work/main/.gpu-mm`, then `bash .gpu-mm/runD.sh` on the H100 with .gpu-mm carried.
cd .gpu-mm
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/libmyns.so PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
echo "commit $(cat COMMIT) $(date +%T)"
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest.log 2>&1; echo "pytest rc $?"; tail -3 $OUT/pytest.log
date +%T
