"""Exploration: 192- against 256-wide Hopper tiles on large bf16 products,
interleaved (every variant of a shape once per round, cuBLAS included),
because single do_bench figures of these shapes moved by up to 9% between
runs (bench/explore/matmul-variants-h100-wide192*.log). Each myns result is
checked against its float64 elementwise bound.

    python bench/explore/matmul_wide_pick.py [--rounds 5]

Prints per shape the median TFLOP/s of each variant and its ratio to cuBLAS.
"""

import argparse
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from bench_matmul import bound_share  # noqa: E402
from matmul_variants import operands  # noqa: E402

# (batch, M, K, N, b layout): "nk" is x @ W^T with W [N, K].
SHAPES = [
    (1, 8192, 8192, 8192, "kn"),
    (1, 4096, 4096, 4096, "kn"),
    (1, 4096, 4096, 4096, "nk"),
    (1, 4096, 4096, 14336, "nk"),
    (1, 8192, 4096, 14336, "nk"),
    (1, 8192, 14336, 4096, "nk"),
    (1, 2048, 4096, 32000, "nk"),
    (1, 2048, 4096, 128256, "nk"),
    (8, 2048, 2048, 2048, "kn"),
    (1, 3000, 1000, 2000, "kn"),
]
VARIANTS = ["auto", "wg256", "wg192"]


def main():
    from triton.testing import do_bench

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    for batch, m, k, n, lay in SHAPES:
        torch.manual_seed(m + k + n)
        a, b = operands("bf16", batch, m, k, n, lay)
        mm = myns.bmm if batch > 1 else myns.matmul
        flop = 2.0 * batch * m * k * n
        times = {v: [] for v in VARIANTS + ["cublas"]}
        for _ in range(args.rounds):
            for v in VARIANTS:
                myns.set_override("MYNS_MATMUL_KERNEL", v)
                times[v].append(do_bench(lambda: mm(a, b), warmup=5, rep=25, return_mode="median"))
            myns.set_override("MYNS_MATMUL_KERNEL", None)
            times["cublas"].append(do_bench(lambda: torch.matmul(a, b), warmup=5, rep=25, return_mode="median"))
        shares = []
        for v in VARIANTS:
            myns.set_override("MYNS_MATMUL_KERNEL", v)
            shares.append(bound_share(mm(a, b), a, b, "bf16")[0])
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        med = {v: statistics.median(t) for v, t in times.items()}
        cells = "  ".join(f"{v} {flop / med[v] / 1e9:6.1f} ({med['cublas'] / med[v]:.3f})" for v in VARIANTS)
        print(f"{batch}x{m}x{k}x{n} {lay}: {cells}  cublas {flop / med['cublas'] / 1e9:6.1f}  max err/bound {max(shares):.2f}", flush=True)
        del a, b


if __name__ == "__main__":
    main()
