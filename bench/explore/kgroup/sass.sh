#!/bin/bash
# SASS of mm_wg64_bf16_kn, the library's kernel (base) and run 1's (kg2).
# Here (cubins from the kernels of 8bf7d18, attempt.diff applied for both,
# the knob set for kg2 only; OUTD: the build's out/ with gemm_tiles.h):
#   nvcc --cubin -O3 -std=c++17 --expt-relaxed-constexpr \
#     -gencode=arch=compute_90a,code=sm_90a -I kernels -I $OUTD \
#     [-DMYNS_WG_KGROUP=2] -o .gpu/{kg2,base}.cubin kernels/matmul_sm90a.cu
#   xz .gpu/*.cubin
# then on the device machine (which has cuobjdump; the toolkit from PyPI here has none):
#   bash bench/explore/kgroup/sass.sh
set -eu
cd .gpu && xz -dkf base.cubin.xz kg2.cubin.xz
for v in base kg2; do /usr/local/cuda/bin/cuobjdump -sass -fun mm_wg64_bf16_kn $v.cubin > $OUT/$v-wg64.sass; done
# (results/ keeps the main loops: from the first TRYWAIT to the DEPBAR.LE gsb0, 0x0 after it, encodings dropped.)
