# Device run (from the repository root, library in .gpu/): the matmul
# report, then TF32 on the Llama projections: forced tiles and kernel times
# against cuBLAS's.
set -u
SECONDS=0
source bench/explore/tf32-llm/env.sh
MYNS_GIT_COMMIT=$(cat .gpu/COMMIT) timeout 200 python3 bench/bench_matmul.py --rounds 5 --out $OUT/mm --command "python bench/bench_matmul.py --rounds 5 --out /root/out/mm" > $OUT/mm.out 2>&1; echo "bench exit $? at $SECONDS s"
grep -A10 "by class" $OUT/mm/*.md 2>/dev/null | head -12
timeout 150 python3 bench/explore/matmul_variants.py --only tf32llm --out $OUT > $OUT/variants-tf32llm.log 2>&1; echo "variants exit $? at $SECONDS s"
timeout 120 python3 bench/explore/matmul_kernel_times.py --set tf32llm --variants wg256c1,wg192,wg128 > $OUT/ktimes-tf32llm.log 2>&1; echo "ktimes exit $? at $SECONDS s"
tail -40 $OUT/variants-tf32llm.log
