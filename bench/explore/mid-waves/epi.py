"""What the register epilogue costs on one wave of tiles: forced widths with
their staged TMA-store epilogue against the same plan storing from
registers (MYNS_MATMUL_TMA_STORE=off), ratio to cuBLAS, interleaved
do_bench medians (bench_matmul.bench_pair), nn.Linear's weight.

    python bench/explore/mid-waves/epi.py --shapes "M,K,N:variant;..."
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import bench_matmul as bm  # noqa: E402
import myns  # noqa: E402


def run(a, b, variant, store):
    myns.set_override("MYNS_MATMUL_KERNEL", variant)
    myns.set_override("MYNS_MATMUL_TMA_STORE", store)
    try:
        return torch.ops.myns.matmul(a, b)
    finally:
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        myns.set_override("MYNS_MATMUL_TMA_STORE", None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, commit {os.environ.get('MYNS_GIT_COMMIT', '?')}, weights nk, bf16")
    print("| M x K x N | variant | staged (TMA) | registers | registers / staged time |")
    print("|---|---|---|---|---|")
    for item in args.shapes.split(";"):
        shape, variant = item.split(":")
        m, k, n = map(int, shape.split(","))
        a, b = bm.operands("bf16", 1, m, k, n, "nk")
        for store in (None, "off"):
            share, _ = bm.bound_share(run(a, b, variant, store), a, b, "bf16")
            assert share <= 1, (shape, variant, store, share)
        fns = {"torch": lambda: torch.matmul(a, b), "staged": lambda: run(a, b, variant, None), "regs": lambda: run(a, b, variant, "off")}
        med, _ = bm.bench_pair(fns, 5, 20)
        print(f"| {m}x{k}x{n} | {variant} | {med['torch'] / med['staged']:.3f} | {med['torch'] / med['regs']:.3f} | {med['regs'] / med['staged']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
