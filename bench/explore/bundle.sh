#!/usr/bin/env bash
# Copies what bench/explore/gpu_run.sh needs into DEST (default
# /work/main/.gpu-mm, the folder the device tool carries): the release
# library, the Python loader, the matmul tests and benchmarks, a commit stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-/work/main/.gpu-mm}
rm -rf "$dest" && mkdir -p "$dest/tests/python" "$dest/bench/explore"
cp target/release/libmyns.so "$dest/"
cp -r python_loader "$dest/"
rm -f "$dest"/python_loader/myns/*.so
cp tests/python/conftest.py tests/python/test_matmul_kernels.py tests/python/test_bmm.py "$dest/tests/python/"
cp bench/bench_matmul.py "$dest/bench/"
cp bench/explore/*.py bench/explore/gpu_run.sh "$dest/bench/explore/"
echo "$(git rev-parse --short HEAD)$(git status --porcelain --untracked-files=no | grep -q . && echo -dirty)" > "$dest/COMMIT"
du -sh "$dest"
