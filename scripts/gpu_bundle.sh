#!/usr/bin/env bash
# Collects what the GPU machine needs (it has torch but no Rust): the built
# library and the Rust test/example binaries, into .gpu/ (git-ignored), and
# the Liger-Kernel wheel (a benchmark baseline; pure Python) into .whl/.
# Then run scripts/gpu_run.sh there with `.gpu` (and `.whl` for bench) carried.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu/bin
cp python_loader/myns/libmyns*.so .gpu/libmyns.so
cargo test --release --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])' \
  | while read -r name exe; do
      # Tests that read the source tree (header, layering) skip on the GPU machine anyway.
      case $name in c_abi_header|layers) continue ;; esac
      cp "$exe" ".gpu/bin/test_$name"
    done
for ex in examples/*.rs; do
  name=$(basename "$ex" .rs)
  cp "${CARGO_TARGET_DIR:-target}/release/examples/$name" ".gpu/bin/example_$name"
done
# Each binary embeds the kernels (~15 MB) and a device call carries 64 MiB
# in all: ship them xz-compressed (about 6x); gpu_run.sh unpacks them.
xz -T0 -f .gpu/bin/* .gpu/libmyns.so
# The wheel for this torch (scripts/gpu_run.sh wheel installs and runs it there).
cp dist/myns-*+"$("${PY:-.venv/bin/python}" -c 'import torch; v = torch.__version__.split("+")[0].split("."); print(f"torch{v[0]}.{v[1]}")')"*.whl .gpu/ 2>/dev/null \
  || echo "no wheel in dist/ for this torch: scripts/gpu_run.sh wheel will fail"
# The commit the bundle was built from, for benchmark reports (no .git there).
echo "$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)" > .gpu/COMMIT
# Liger-Kernel has no GPU-machine copy and that machine has no network.
LIGER=liger-kernel==0.8.5
if ! ls .whl/liger_kernel-0.8.5-*.whl >/dev/null 2>&1; then
  "${PY:-.venv/bin/python}" -m pip download -q "$LIGER" --no-deps -d .whl \
    || echo "could not download $LIGER: bench_rowwise will run without the Liger baseline"
fi
ls -la .gpu .gpu/bin .whl 2>/dev/null
# A device call carries at most 64 MiB in all.
du -shc .gpu .whl 2>/dev/null | tail -1
