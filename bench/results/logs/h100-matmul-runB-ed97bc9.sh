# Run B (bundle at ed97bc9): `bash bench/explore/bundle.sh /work/main/.gpu-mm` here (the session checkout's ignored
# .gpu-mm), then on the H100 `bash .gpu-mm/runB.sh` with .gpu-mm carried. The bench run did not set
# MYNS_GIT_COMMIT, so its report said `unknown`; the committed copies name ed97bc9 (the bundle's COMMIT).
cd .gpu-mm
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/libmyns.so PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
echo "commit $(cat COMMIT) $(date +%T)"
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_matmul_kernels.py tests/python/test_bmm.py > $OUT/pytest.log 2>&1; echo "pytest rc $?"; tail -15 $OUT/pytest.log
echo "bench $(date +%T)"
timeout 200 python3 bench/bench_matmul.py --out $OUT --command "python3 bench/bench_matmul.py --rounds 3" > $OUT/bench.log 2>&1; echo "bench rc $?"; tail -12 $OUT/bench.log
echo "memcheck $(date +%T)"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize > $OUT/sanitize-memcheck.log 2>&1; echo "memcheck rc $?"; tail -3 $OUT/sanitize-memcheck.log
date +%T
