# Device run (from the repository root, library in .gpu/): kernel times of
# pairs against single blocks on K-major B, TF32 and bfloat16, the
# variants in one order and then the reverse (the runs are not interleaved:
# a long TF32 product heats the GPU for the next).
set -u
SECONDS=0
source bench/explore/tf32-llm/env.sh
timeout 250 python3 bench/explore/matmul_kernel_times.py --set tf32pairs --calls 20 --variants wg256c1,wg256c2,wg192c1,wg192c2 > $OUT/pairs-fwd.log 2>&1; echo "fwd exit $? at $SECONDS s"
timeout 250 python3 bench/explore/matmul_kernel_times.py --set tf32pairs --calls 20 --variants wg192c2,wg192c1,wg256c2,wg256c1 > $OUT/pairs-rev.log 2>&1; echo "rev exit $? at $SECONDS s"
grep "kernels" $OUT/pairs-fwd.log | head -80
