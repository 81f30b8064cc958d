#!/usr/bin/env bash
# `make wheel`: a manylinux wheel of myns for the torch of the given Python,
# in dist/. `make wheel-test`: that wheel installed into a fresh virtualenv
# with the same torch, and an op run on the CPU (and on CUDA where there is one).
# Usage: scripts/wheel.sh PYTHON [--test TORCH_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$1
tag=$("$PY" -c 'import torch; v = torch.__version__.split("+")[0].split("."); c = torch.version.cuda; print(f"torch{v[0]}.{v[1]}" + ("cu" + c.replace(".", "") if c else "cpu"))')

if [ "${2:-}" = --test ]; then
  torch=$3
  whl=$(ls dist/myns-*+"$tag"-*.whl)
  venv=dist/venv-wheel-test-$tag
  rm -rf "$venv"
  "$PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "torch==$torch" "$whl"
  # Outside the source tree, so the installed package is the one imported.
  (cd /tmp && "$OLDPWD/$venv/bin/python" - <<'PY'
import torch, myns
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
assert torch.equal(myns.add(x, x), 2 * x), "add on CPU"
assert torch.equal(torch.ops.myns.matmul(x, x.T), x @ x.T), "matmul on CPU"
where = "CPU"
if torch.cuda.is_available():
    y = x.cuda()
    assert torch.equal(myns.add(y, y).cpu(), 2 * x), "add on CUDA"
    where += " and CUDA"
print(f"wheel ok: myns {myns.__version__} from {myns.library_path()} with torch {torch.__version__} on {where}")
PY
  )
  rm -rf "$venv"
  exit 0
fi

rm -rf dist/raw && mkdir -p dist
"$PY" -m pip wheel -q --no-build-isolation --no-deps -w dist/raw .
# The library is loaded by torch, not imported by Python: any CPython 3.
"$PY" -m wheel tags --remove --python-tag py3 --abi-tag none dist/raw/myns-*.whl >/dev/null
# A manylinux tag, checked against the symbols the library uses; libtorch
# stays out of the wheel (the user's torch provides it).
rm -f dist/myns-*+"$tag"-*.whl
"$PY" -m auditwheel repair -w dist --exclude 'libtorch*.so' --exclude 'libc10*.so' dist/raw/myns-*.whl
rm -rf dist/raw
ls -la dist/myns-*+"$tag"-*.whl
