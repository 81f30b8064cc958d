#!/usr/bin/env bash
# Collects what the GPU machine needs (it has torch but no Rust): the built
# library and the Rust test/example binaries, into .gpu/ (git-ignored).
# Then run scripts/gpu_run.sh there with `.gpu` carried.
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
  | while read -r name exe; do cp "$exe" ".gpu/bin/test_$name"; done
for ex in examples/*.rs; do
  name=$(basename "$ex" .rs)
  cp "target/release/examples/$name" ".gpu/bin/example_$name"
done
# The commit the bundle was built from, for benchmark reports (no .git there).
echo "$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)" > .gpu/COMMIT
ls -la .gpu .gpu/bin
