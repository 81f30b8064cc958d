"""compute-sanitizer workload: every forced matmul variant that runs in
pairs of blocks (`c2`: sharing B, `n2`: sharing A; split K included),
on the sanitize workload's light products, each result checked against
its float64 bound.

    compute-sanitizer --tool racecheck python3 bench/explore/pair-cost/sanitize_pairs.py
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))

import torch  # noqa: E402

import cuda_paths as cp  # noqa: E402
from sanitize_workload import LIGHT_PRODUCTS  # noqa: E402

prods = [p for p in cp.products() if p[0] in LIGHT_PRODUCTS]
n = 0
for kind, variant in cp.matmul_paths():
    if "c2" in variant or "n2" in variant:
        n += cp.check_matmul_path(kind, variant, with_opcheck=False, with_grads=False, device="cuda", prods=prods, ref_device="cpu")
torch.cuda.synchronize()
print(f"pairs workload ok: {n} calls checked", flush=True)
