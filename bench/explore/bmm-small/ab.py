"""A/B of two matmul libraries on short-K products: kernel time per call
(torch.profiler, L2 flushed before each call, mean of --calls) and do_bench
median, for myns and torch.matmul/bmm, one library per process (run it once
per library, alternating; ab.sh does).

    MYNS_LIBRARY=<lib> python bench/explore/bmm-small/ab.py --tag base [--set large]
"""
import argparse
import os
import sys

import torch
import triton.testing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from matmul_kernel_times import kernel_times  # noqa: E402
from matmul_variants import operands  # noqa: E402

SHAPES = [  # kind, batch, m, k, n, b layout
    ("bf16", 256, 128, 64, 128, "kn"),
    ("bf16", 256, 128, 64, 128, "nk"),
    ("bf16", 64, 256, 64, 256, "kn"),
    ("bf16", 512, 64, 64, 64, "kn"),
    ("bf16", 32, 512, 512, 512, "kn"),
    ("bf16", 8, 2048, 2048, 2048, "kn"),
    ("bf16", 1, 512, 512, 512, "kn"),
    ("bf16", 1, 1024, 1024, 1024, "kn"),
    ("bf16", 1, 1000, 1000, 1000, "kn"),
    ("bf16", 1, 2048, 2048, 2048, "kn"),
    ("bf16", 1, 3000, 1000, 2000, "kn"),
    ("bf16", 1, 4096, 1024, 4096, "nk"),
    ("bf16", 1, 4096, 4096, 4096, "kn"),
    ("bf16", 1, 2048, 4096, 32000, "nk"),
    ("f16", 1, 1024, 1024, 1024, "kn"),
]
# --set large: long products, where waiting warps' spinning may cost clock
# under the power limit, and decode (the skinny kernel's ring).
LARGE = [
    ("f16", 1, 4096, 4096, 4096, "kn"),
    ("f16", 1, 8192, 8192, 8192, "kn"),
    ("f16", 1, 4096, 4096, 14336, "nk"),
    ("bf16", 1, 8192, 4096, 14336, "nk"),
    ("bf16", 1, 1, 14336, 4096, "kn"),
    ("bf16", 1, 16, 4096, 14336, "kn"),
    ("bf16", 1, 128, 4096, 4096, "kn"),
]


def kernel_us(fn, calls):
    """GPU time per call of all the kernels `fn` queues (the flush's left out)."""
    for _ in range(3):
        fn()
    return sum(kernel_times(fn, calls).values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", required=True)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--set", choices=["short", "large"], default="short")
    args = ap.parse_args()
    for kind, batch, m, k, n, lay in SHAPES if args.set == "short" else LARGE:
        torch.manual_seed(0)
        a, b = operands(kind, batch, m, k, n, lay)
        ours = (lambda: myns.bmm(a, b)) if batch > 1 else (lambda: myns.matmul(a, b))
        ref = (lambda: torch.bmm(a, b)) if batch > 1 else (lambda: torch.matmul(a, b))
        ko, kr = kernel_us(ours, args.calls), kernel_us(ref, args.calls)
        do = triton.testing.do_bench(ours, warmup=25, rep=100) * 1e3
        dr = triton.testing.do_bench(ref, warmup=25, rep=100) * 1e3
        print(f"{args.tag} {kind} {batch}x{m}x{k}x{n} {lay}: kernel {ko:.2f} torch {kr:.2f} | do_bench {do:.2f} torch {dr:.2f}", flush=True)


if __name__ == "__main__":
    main()
