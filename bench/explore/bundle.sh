#!/usr/bin/env bash
# Copies what bench/explore/gpu_run.sh needs into DEST (default build/gpu-mm,
# git-ignored, for the device tool's carry): the release library built for
# the GPU machine's torch (`make build TORCH=2.11.0`), the Python loader, the
# matmul tests and benchmarks, a commit stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-build/gpu-mm}
rm -rf "$dest" && mkdir -p "$dest/tests/python" "$dest/bench/explore"
cp "${LIB:-target/torch2.11.0/release/libmyns.so}" "$dest/"
cp -r python_loader "$dest/"
rm -f "$dest"/python_loader/myns/*.so
cp tests/python/conftest.py tests/python/test_matmul_kernels.py tests/python/test_bmm.py "$dest/tests/python/"
cp bench/bench_matmul.py "$dest/bench/"
cp bench/explore/*.py bench/explore/gpu_run.sh "$dest/bench/explore/"
echo "$(git rev-parse --short HEAD)$(git status --porcelain --untracked-files=no | grep -q . && echo -dirty)" > "$dest/COMMIT"
du -sh "$dest"
