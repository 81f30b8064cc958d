#!/usr/bin/env bash
# Device run (bundle in .gpu/): ncu of the matmul classes still below their
# issue #15 targets, ours against cuBLAS, one kernel launch each after two
# warm calls (bench/explore/ncu_matmul.py): TF32 4096^3 (ours: the rounding
# copy and the product), the ragged 3000 x 1000 x 2000, bmm of 256 small
# products, f16 1024^3, and M = 16 decode against 4096 x 14336 weights.
# Sections: speed of light, compute and memory workload, scheduler, warp
# states, instructions, launch, occupancy. Writes $OUT/ncu-$GPU_TAG-<tag>.txt
# (GPU_TAG h100 unless set; README.md here: the run at 1e54be5). CASES=tf32:
# only TF32 512^3, 1024^3 and 4096^3 (SIZES="512 1024": those), ours (one
# launch: the operands are read in place since 605e258) against cuBLAS.
set -uo pipefail
OUT=${OUT:-/tmp/ncu-out}; mkdir -p "$OUT"
python3 - <<'PY'
import glob, lzma, os
for f in glob.glob(".gpu/bin/*.xz") + glob.glob(".gpu/*.xz"):
    with lzma.open(f) as s, open(f[:-3], "wb") as d: d.write(s.read())
    os.chmod(f[:-3], 0o755); os.remove(f)
PY
export MYNS_LIBRARY=$PWD/.gpu/libmyns.so PYTHONPATH=$PWD/python_loader PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__)+"/lib")'):/usr/local/nvidia/lib64
cat .gpu/COMMIT > "$OUT/commit.txt"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats
   --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy"
one() {  # one <tag> <launches to skip> <launches to profile> <ncu_matmul.py args...>
  local tag=$1 skip=$2 count=$3
  shift 3
  timeout 150 ncu $S --kernel-name regex:"mm_|gemm|nvjet|xmma|cutlass" --launch-skip "$skip" --launch-count "$count" \
    python3 bench/explore/ncu_matmul.py "$@" > "$OUT/ncu-${GPU_TAG:-h100}-$tag.txt" 2>&1
  echo "== $tag: exit $?"
  grep -E "^  [a-zA-Z_].*\(|^    Duration|^    Compute \(SM\) Throughput|^    Memory Throughput|^    DRAM Throughput|^    Executed Ipc Active|^    No Eligible" "$OUT/ncu-${GPU_TAG:-h100}-$tag.txt" | head -24
}
if [ "${CASES:-all}" = tf32 ]; then
  for n in ${SIZES:-512 1024 4096}; do
    one tf32-$n-myns 2 1 myns $n $n $n tf32
    one tf32-$n-torch 2 1 torch $n $n $n tf32
  done
  exit 0
fi
one tf32-4096-myns 4 2 myns 4096 4096 4096 tf32   # two launches a call: the rounding copy, the product
one tf32-4096-torch 2 1 torch 4096 4096 4096 tf32
one ragged-3000-myns 2 1 myns 3000 1000 2000
one ragged-3000-torch 2 1 torch 3000 1000 2000
one bmm256-myns 2 1 myns 128 64 128 bf16 256
one bmm256-torch 2 1 torch 128 64 128 bf16 256
one f16-1024-myns 2 1 myns 1024 1024 1024 f16
one f16-1024-torch 2 1 torch 1024 1024 1024 f16
one decode16-14336-myns 2 1 myns 16 4096 14336
one decode16-14336-torch 2 1 torch 16 4096 14336
