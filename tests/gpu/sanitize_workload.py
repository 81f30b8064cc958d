"""A CUDA workload over every myns kernel path, for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/sanitize_workload.py
    compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/sanitize_workload.py --light

What it runs (tests/python/cuda_paths.py lists the paths; `make test-gpu`
runs all four tools over it):

* every op in every dtype on op_cases' inputs (forward and backward ops,
  in-place ops, odd sizes);
* every forced matmul variant (the Hopper kernel at each tile width, split
  over K, TF32 from rounded copies and through registers, the mma.sync and
  CUDA-core tiles and their splits) on an aligned multi-tile product, a
  transposed operand and a base pointer one element off, plus a bmm;
* every build of the forward row reductions (r1, r2, r2:32:8, general,
  general:32:8, automatic; rms_norm's and layer_norm's r4) in every dtype on rows it holds (vector and
  scalar), with the backward ops on their outputs.

Every result is checked element by element against a float64 reference
within its bound (tests/python/bounds.py), with NaN canaries around the
arguments; an error ends the run with a non-zero status. The references
are computed on the CPU, so the sanitizers spend their time on the ops
under test rather than on PyTorch's own kernels. `--light` keeps two
products per matmul variant, the aligned one and the batched decode (the
skinny kernel's rings; memcheck's full run adds the misaligned ones), and
one shape per row build and dtype: racecheck is slow (with a third
product, 369 s of its 420 on the H200).
"""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

import myns  # noqa: E402
import cuda_paths as cp  # noqa: E402
from op_cases import CASES, check_op  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
LIGHT_PRODUCTS = ("aligned-nn", "decode")


def workload_paths(light: bool):
    """(row paths, matmul paths, products) the workload runs."""
    rows = cp.row_paths()
    if light:
        first = {}
        for b, d, s in rows:
            first.setdefault((b, d), (b, d, s))
        rows = list(first.values())
    products = [p for p in cp.products() if not light or p[0] in LIGHT_PRODUCTS] or cp.products()
    return rows, cp.matmul_paths(), products


def run(light: bool = False, device: str = "cuda") -> int:
    """Runs the workload; returns the number of checked calls. On the CPU
    (a dry run of this code for make test: variants and builds have no
    effect there) one matmul variant per kind."""
    torch.manual_seed(0)
    rows, matmuls, products = workload_paths(light)
    if device == "cpu":
        matmuls = list({k: (k, v) for k, v in reversed(matmuls)}.values())
    checked = 0
    for name in sorted(myns.op_names()):
        for dtype in DTYPES:
            check_op(name, list(CASES[name].args(dtype, device)), ref_device="cpu")
            checked += 1
    for build, dtype, shape in rows:
        checked += cp.check_row_path(build, dtype, shape, with_opcheck=False, device=device, ref_device="cpu")
    for build, dtype, shape in cp.four_pack_paths():
        if not light or shape == cp.FOUR_PACK_SHAPES[0]:
            checked += cp.check_four_pack_path(build, dtype, shape, with_opcheck=False, device=device, ref_device="cpu")
    for kind, variant in matmuls:
        checked += cp.check_matmul_path(kind, variant, with_opcheck=False, with_grads=variant == "auto", device=device,
                                        prods=products, ref_device="cpu")
    if device == "cuda":
        torch.cuda.synchronize()
    return checked


if __name__ == "__main__":
    assert torch.cuda.is_available(), "sanitize_workload.py needs a CUDA device"
    t0 = time.time()
    n = run(light="--light" in sys.argv)
    print(f"sanitize workload ok: {n} op calls checked in {time.time() - t0:.0f} s", flush=True)
