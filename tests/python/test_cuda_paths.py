"""Every CUDA kernel path under opcheck, value and gradient checks, on
shapes that reach it (tests/python/cuda_paths.py lists them): each forced
matmul variant (the Hopper kernel at each tile width, split over K, TF32 in
both forms, the mma.sync and CUDA-core tiles and their splits), aligned and
unaligned operands, and every forced build of the row reductions in every
dtype. A CUDA-only module: skipped without a GPU, a failure under
MYNS_REQUIRE_CUDA=1 (make test-gpu)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import requires_cuda
import torch

import myns
from cuda_paths import (
    ROW_BUILDS,
    check_matmul_path,
    check_four_pack_path,
    check_row_path,
    forced_rows,
    gradcheck_row_build,
    isolated,
    matmul_paths,
    four_pack_paths,
    row_paths,
)

pytestmark = requires_cuda
HERE = os.path.dirname(os.path.abspath(__file__))


def _dt(d):
    return str(d).removeprefix("torch.")


ROWS = row_paths()
# opcheck once per build and dtype (on its first shape): it traces the op
# several ways and costs far more than a call.
FIRST = {(b, d): s for b, d, s in reversed(ROWS)}


@pytest.mark.parametrize("build,dtype,shape", ROWS, ids=[f"{b}-{_dt(d)}-{s}" for b, d, s in ROWS])
def test_row_path(build, dtype, shape):
    check_row_path(build, dtype, shape, with_opcheck=FIRST[(build, dtype)] == shape)


@pytest.mark.parametrize("build", ROW_BUILDS)
def test_row_build_gradcheck(build):
    gradcheck_row_build(build)


FOUR_PACK = four_pack_paths()
FOUR_PACK_FIRST = {(b, d): s for b, d, s in reversed(FOUR_PACK)}


@pytest.mark.parametrize("build,dtype,shape", FOUR_PACK, ids=[f"{b}-{_dt(d)}-{s}" for b, d, s in FOUR_PACK])
def test_four_pack_path(build, dtype, shape):
    check_four_pack_path(build, dtype, shape, with_opcheck=FOUR_PACK_FIRST[(build, dtype)] == shape)


def test_four_pack_gradcheck():
    o = dict(dtype=torch.float64, device="cuda", requires_grad=True)
    with forced_rows("r4"):
        x, w, b = torch.randn(3, 256, **o), torch.randn(256, **o), torch.randn(256, **o)  # 128 packs: one warp of four each
        assert torch.autograd.gradcheck(lambda a, c: myns.rms_norm(a, c, 1e-5), (x, w))
        assert torch.autograd.gradcheck(lambda a, c, d: myns.layer_norm(a, c, d, 1e-5), (x, w, b))


MATMUL = matmul_paths()
_ISOLATED_RESULTS: dict | None = None

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import cuda_paths as cp
for kind, variant in json.loads(sys.argv[2]):
    try:
        n = cp.check_matmul_path(kind, variant)
        print("RESULT " + json.dumps([kind, variant, "ok", str(n)]), flush=True)
    except Exception as e:
        print("RESULT " + json.dumps([kind, variant, "fail", f"{type(e).__name__}: {e}"[:4000]]), flush=True)
"""


def isolated_results(timeout=300):
    """Runs every isolated variant's path check in one child process (a
    hung Hopper kernel must not hang pytest); results by (kind, variant)."""
    global _ISOLATED_RESULTS
    if _ISOLATED_RESULTS is None:
        todo = [p for p in MATMUL if isolated(p[1])]
        results, out, err = {}, "", ""
        try:
            r = subprocess.run([sys.executable, "-c", CHILD, HERE, json.dumps(todo)], capture_output=True, text=True, timeout=timeout)
            out, err = r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = f"child stopped after {timeout} s (a hung kernel?)"
        for line in out.splitlines():
            if line.startswith("RESULT "):
                kind, variant, status, detail = json.loads(line[7:])
                results[(kind, variant)] = (status, detail)
        _ISOLATED_RESULTS = {"results": results, "stderr": err[-4000:]}
    return _ISOLATED_RESULTS


@pytest.mark.parametrize("kind,variant", MATMUL, ids=[f"{k}-{v}" for k, v in MATMUL])
def test_matmul_path(kind, variant):
    if not isolated(variant):
        check_matmul_path(kind, variant)
        return
    res = isolated_results()
    status, detail = res["results"].get((kind, variant), ("missing", f"no result from the child process:\n{res['stderr']}"))
    assert status == "ok", f"{kind} {variant}: {detail}"
