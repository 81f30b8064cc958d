# Run A (bundle at 9bcd72c, the engine of 0ab6b05): run from the repository root on the H100 as
# `bash .gpu-mm/runA.sh` with .gpu-mm carried (bench/explore/bundle.sh .gpu-mm, plus bench/explore/ncu_matmul.py).
cd .gpu-mm
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/libmyns.so PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
echo "commit $(cat COMMIT) $(date +%T)"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize > $OUT/sanitize-memcheck.log 2>&1; echo "memcheck rc $?"; tail -3 $OUT/sanitize-memcheck.log
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/python/test_matmul_kernels.py --sanitize --only-wg > $OUT/sanitize-racecheck.log 2>&1; echo "racecheck rc $?"; tail -3 $OUT/sanitize-racecheck.log
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats"
for shape in "4096 4096 4096" "3000 1000 2000"; do
 timeout 60 ncu $S --kernel-name regex:mm_ --launch-skip 2 --launch-count 1 python3 bench/explore/ncu_matmul.py myns $shape >> $OUT/ncu-myns.txt 2>&1; echo "ncu myns $shape rc $?"
 timeout 60 ncu $S --kernel-name regex:'gemm|nvjet|xmma' --launch-skip 2 --launch-count 1 python3 bench/explore/ncu_matmul.py torch $shape >> $OUT/ncu-cublas.txt 2>&1; echo "ncu torch $shape rc $?"
done
date +%T
