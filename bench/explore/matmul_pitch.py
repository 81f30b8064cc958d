"""Exploration: does a row pitch that is 16-byte but not 128-byte aligned slow
the Hopper kernels? (4096 x 4096 x 4088 ran at 0.69 of cuBLAS where 4096^3
ran at 0.90; 3000 x 1000 x 2000 and 1000^3 at 0.52 and 0.70.)

For each shape M x K x N (a [M, K] row-major, b [K, N] row-major), times
myns.matmul and torch.matmul on
- raw: contiguous operands (pitches K and N);
- padded: the same values in views of buffers whose rows are padded to a
  multiple of 64 elements (128 bytes), the output as before;
- the cost of making those padded copies (one copy_ per operand).
Every myns result is checked against float64 (bench_matmul.bound_share).

    python bench/explore/matmul_pitch.py [--rounds 3]
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402,F401
from bench_matmul import bench_pair, bound_share  # noqa: E402

SHAPES = [(4096, 4096, 4096), (4096, 4096, 4088), (3000, 1000, 2000), (1000, 1000, 1000), (2048, 2048, 2048), (4096, 4088, 4096)]


def padded_view(x, mult=64):
    rows, cols = x.shape
    pc = (cols + mult - 1) // mult * mult
    buf = torch.zeros(rows, pc, device=x.device, dtype=x.dtype)
    v = buf[:, :cols]
    v.copy_(x)
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.manual_seed(0)
    print(f"{'MxKxN':>16} {'variant':>10} {'myns TF':>8} {'cublas TF':>9} {'ratio':>6} {'err/bd':>6}")
    for m, k, n in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        ap_, bp = padded_view(a), padded_view(b)
        flop = 2 * m * n * k
        fns = {
            "myns raw": lambda: torch.ops.myns.matmul(a, b),
            "cublas raw": lambda: torch.matmul(a, b),
            "myns pad": lambda: torch.ops.myns.matmul(ap_, bp),
            "cublas pad": lambda: torch.matmul(ap_, bp),
            "copy a": lambda: ap_.copy_(a),
            "copy b": lambda: bp.copy_(b),
        }
        med, _ = bench_pair(fns, args.rounds, 100)
        for v in ["raw", "pad"]:
            out = fns[f"myns {v}"]()
            share, _ = bound_share(out, a, b, "bf16")
            tm, tc = med[f"myns {v}"], med[f"cublas {v}"]
            print(f"{m}x{k}x{n:>6} {v:>10} {flop / tm / 1e9:8.1f} {flop / tc / 1e9:9.1f} {tc / tm:6.3f} {share:6.2f}")
        print(f"{'':>16} {'copies':>10} a {med['copy a'] * 1e3:.1f} us, b {med['copy b'] * 1e3:.1f} us; myns raw {med['myns raw'] * 1e3:.1f} us, pad {med['myns pad'] * 1e3:.1f} us")


if __name__ == "__main__":
    main()
