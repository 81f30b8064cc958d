#!/usr/bin/env bash
# Builds the cubins rope_variants.py and rope_inplace.py launch (here, with the pinned nvcc and
# the generated kernel_params.cuh of a `cargo build`), into DEST.
#   bash bench/explore/rope/rope_variants.sh [DEST]   (default build/gpu-row/rope)
set -euo pipefail
cd "$(dirname "$0")/../../.."
dest=${1:-build/gpu-row/rope}
mkdir -p "$dest"
nvcc=${NVCC:-.toolchain/cuda-13.0.88/nvidia/cu13/bin/nvcc}
gen=$(dirname "$(ls -t target/*/release/build/myns-*/out/kernel_params.cuh target/release/build/myns-*/out/kernel_params.cuh 2>/dev/null | head -1)")
cc() { "$nvcc" --cubin -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I kernels -I "$gen" "$@"; }
# base: the library's kernel before the loop-free one (2f69311), which the
# variants and rope_inplace.py's "ours" runners launch with its parameters.
git show 2f69311:kernels/rope.cu > "$dest/rope_2f69311.cu"
cc -o "$dest/base.cubin" "$dest/rope_2f69311.cu"
cc -o "$dest/flat.cubin" bench/explore/rope/rope_flat.cu
for m in 2 3 4; do cc -DMINB=$m -o "$dest/var-m$m.cubin" bench/explore/rope/rope_variant.cu; done
cc -DTMB=1 -o "$dest/tm1.cubin" bench/explore/rope/rope_variant.cu
cc -DTMB=2 -o "$dest/tm2.cubin" bench/explore/rope/rope_variant.cu
ls -la "$dest"
