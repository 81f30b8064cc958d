"""Exploration: would a padded copy of an MN-major b whose k-lines are not
128-byte aligned (N = 1000 bf16: 2000-byte rows) pay for itself on one-wave
products? Times, interleaved, do_bench medians (L2 flushed):
  torch      torch.matmul(a, b)
  myns       myns.matmul(a, b)                  (b read in place, misaligned)
  aligned    myns.matmul(a, bp)                 (bp: b in rows padded to 128 bytes; the copy not timed)
  staged     bp.copy_(b); myns.matmul(a, bp)    (the copy timed with it)
  copy       bp.copy_(b) alone
Device run from the repository root, the bundle in .gpu/:
    PYTHONPATH=python_loader MYNS_LIBRARY=.gpu/libmyns.so python bench/explore/pad-misaligned/probe.py [--rounds 3]
"""
import argparse
import os
import sys

import myns  # noqa: F401  (registers torch.ops.myns)
import torch
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from bench_matmul import bound_share  # noqa: E402

SHAPES = [  # M, K, N (b [K, N] row-major)
    (1000, 1000, 1000),
    (1024, 1024, 1000),
    (3000, 1000, 2000),
    (1000, 1000, 2000),
    (2000, 1000, 1000),
    (1000, 4000, 1000),
    (500, 2000, 1000),
    (1000, 2000, 500),
    (2000, 2000, 2000),
    (1500, 1500, 1500),
    (4000, 4000, 4000),
    (1024, 1024, 1024),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtype", default="bf16")
    args = ap.parse_args()
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    mm = torch.ops.myns.matmul
    print(f"{torch.cuda.get_device_name()}  {args.dtype}  rounds {args.rounds}")
    print(f"{'M x K x N':>18} | {'torch':>7} {'myns':>7} {'aligned':>7} {'staged':>7} {'copy':>7} us | myns/torch staged/torch")
    for (m, k, n) in SHAPES:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=dt, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=dt, generator=g)
        ld = (n + 63) // 64 * 64
        bp = torch.empty(k, ld, device="cuda", dtype=dt)[:, :n]
        bp.copy_(b)
        # Elementwise against float64, the benchmark's bound (unit roundoff and K).
        for name, out in (("myns", mm(a, b)), ("aligned", mm(a, bp))):
            worst, _ = bound_share(out, a, b, args.dtype)
            assert worst <= 1.0, (name, worst)
        fns = {
            "torch": lambda: torch.matmul(a, b),
            "myns": lambda: mm(a, b),
            "aligned": lambda: mm(a, bp),
            "staged": lambda: (bp.copy_(b), mm(a, bp)),
            "copy": lambda: bp.copy_(b),
        }
        t = {name: [] for name in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                t[name].append(triton.testing.do_bench(fn, warmup=25, rep=100) * 1e3)
        med = {name: sorted(v)[len(v) // 2] for name, v in t.items()}
        print(f"{m:>5}x{k:>5}x{n:>5} | " + " ".join(f"{med[x]:7.2f}" for x in fns)
              + f" us | {med['torch'] / med['myns']:.3f} {med['torch'] / med['staged']:.3f}")


if __name__ == "__main__":
    main()
