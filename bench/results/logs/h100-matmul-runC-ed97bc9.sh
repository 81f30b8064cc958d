cd .gpu-mm
export PYTHONUNBUFFERED=1 MYNS_LIBRARY=$PWD/libmyns.so PYTHONPATH=$PWD/python_loader
TORCH_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH=$TORCH_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
echo "commit $(cat COMMIT) $(date +%T)"
timeout 240 python3 bench/explore/matmul_variants.py --out $OUT --only planner2 > $OUT/explore.log 2>&1; echo "explore rc $?"
grep -v "^  " $OUT/explore.log | grep -E "TFLOP" | awk '{print $1,$2,$3,$4,$5,$6,$8,$9,$10,$11,$12,$13}'
tail -3 $OUT/explore.log
