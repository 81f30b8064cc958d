"""The plan against the plan it replaced (forced by name) and cuBLAS, per
product: do_bench medians of interleaved rounds in one process, every
result checked against float64 under the report's elementwise bound.

    python bench/explore/ragged/verify.py LIST [--rounds 5]

LIST: lines `layout,M,K,N,old,new` (old / new: MYNS_MATMUL_KERNEL names of
the plan before and the plan now; `new` is timed forced too, to confirm
that the automatic plan is it).
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", ".."), os.path.join(HERE, "..", "cliff-hunt")]
import bench_matmul as bm  # noqa: E402
from sweep import forced  # noqa: E402  (a forced plan's product)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("list")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, commit {os.environ.get('MYNS_GIT_COMMIT', '?')}, bf16, {args.rounds} rounds")
    print("| b | M x K x N | old plan | new plan | old / cuBLAS | auto / cuBLAS | new forced / cuBLAS | auto / old | err/bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for line in open(args.list):
        if not line.strip():
            continue
        lay, m, k, n, old, new = line.strip().split(",")
        m, k, n = int(m), int(k), int(n)
        a, b = bm.operands("bf16", 1, m, k, n, lay)
        share = max(bm.bound_share(out, a, b, "bf16")[0] for out in (torch.ops.myns.matmul(a, b), forced(old, a, b), forced(new, a, b)))
        fns = {"auto": lambda: torch.ops.myns.matmul(a, b), "old": lambda: forced(old, a, b), "new": lambda: forced(new, a, b), "torch": lambda: torch.matmul(a, b)}
        med, _ = bm.bench_pair(fns, args.rounds, 20)
        r = {x: med["torch"] / med[x] for x in ("auto", "old", "new")}
        print(f"| {lay} | {m}x{k}x{n} | {old} | {new} | {r['old']:.3f} | {r['auto']:.3f} | {r['new']:.3f} | {med['old'] / med['auto']:.3f} | {share:.2f} |", flush=True)
        del a, b


if __name__ == "__main__":
    main()
