"""Kernel times (profiler, L2 flushed before each call) of the automatic
choice, forced variants and cuBLAS, interleaved: each round times every
implementation for `--calls` calls, the order rotated between rounds, so
that clock changes (a long TF32 product heats the GPU) fall on all alike.

    python bench/explore/tf32-llm/interleave.py [--set pairs|wide|flip|small] [--rounds 5] [--calls 10]

Prints per shape and implementation the median over rounds of the mean
kernel time per call, and each round's figure.
"""

import argparse
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
import myns  # noqa: E402
from matmul_kernel_times import kernel_times  # noqa: E402
from matmul_variants import operands  # noqa: E402

# --set: [(kind, m, k, n, b layout, forced variants)]
SETS = {}
SETS["pairs"] = [
    ("bf16", 4096, 4096, 4096, "nk", ["wg256c2", "wg256c1"]),
    ("bf16", 2048, 4096, 32000, "nk", ["wg192c1", "wg256c2"]),
    ("bf16", 4096, 4096, 14336, "nk", ["wg192c1", "wg256c2"]),
    ("tf32", 4096, 4096, 14336, "nk", ["wg192c1", "wg256c2"]),
    ("tf32", 4096, 4096, 1024, "nk", ["wg256c2", "wg256c1"]),
]
# The 192-wide tile against the 256-wide one (each with the planner's
# blocks per cluster) where the planner's choice between them is close.
SETS["wide"] = [
    (kind, m, k, n, lay, ["wg192", "wg256"])
    for kind in ("bf16", "tf32")
    for (m, k, n, lay) in (
        (4096, 4096, 14336, "nk"),
        (8192, 4096, 14336, "nk"),
        (2048, 4096, 32000, "nk"),
        (2048, 4096, 128256, "nk"),
        (8192, 8192, 8192, "nk"),
        (4096, 4096, 4096, "nk"),
        (3000, 1000, 2000, "nk"),
    )
] + [
    ("bf16", m, k, n, "kn", ["wg192", "wg256"])
    for (m, k, n) in ((4096, 4096, 14336), (8192, 4096, 14336), (8192, 8192, 8192), (3000, 1000, 2000), (2048, 4096, 32000))
]

# Shapes whose automatic tile changed from 192 (alone) to 256 (in pairs)
# when the 192-wide tile's K-major efficiency went from 1.03 to 1.0: the
# two plans side by side ("auto" is the library's own choice).
SETS["flip"] = [
    (kind, m, k, n, "nk", ["wg192c1", "wg256c2"])
    for (kind, m, k, n) in (
        ("bf16", 1024, 4096, 12288),
        ("bf16", 2048, 8192, 11008),
        ("bf16", 3072, 4096, 50257),
        ("bf16", 16384, 4096, 28672),
        ("bf16", 16384, 4096, 6144),
        ("bf16", 1536, 1024, 32000),
        ("bf16", 512, 4096, 151936),
        ("bf16", 2048, 4096, 12288),
        ("bf16", 16384, 2048, 3584),
        ("tf32", 2048, 4096, 12288),
        ("tf32", 16384, 4096, 6144),
        ("tf32", 1024, 4096, 50257),
    )
]

# The report's lowest rows after the change (short K, ragged): the
# automatic choice against its neighbours, bfloat16 and float16.
SETS["small"] = [
    ("bf16", 1024, 1024, 1024, "kn", ["wg64", "wg128", "wgh128", "wg64c2"]),
    ("f16", 1024, 1024, 1024, "kn", ["wg64", "wg128", "wgh128"]),
    ("bf16", 1000, 1000, 1000, "kn", ["wg64", "wg128", "wgh128", "wg64c2"]),
    ("f16", 512, 512, 512, "kn", ["wg64", "wgh64", "wg64/2", "wgh128"]),
    ("bf16", 512, 512, 512, "kn", ["wg64", "wgh64", "wg64/2", "wgh128"]),
    ("bf16", 3000, 1000, 2000, "kn", ["wg192c2", "wg192c1", "wg256c2", "wg128"]),
    ("bf16", 3000, 1000, 2000, "nk", ["wg192c2", "wg192c1", "wg256c2", "wg128"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--set", choices=list(SETS), default="pairs")
    args = ap.parse_args()
    for kind, m, k, n, lay, forced in SETS[args.set]:
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        a, b = operands(kind, 1, m, k, n, lay)
        impls = [("auto", None), *[(v, v) for v in forced], ("torch", None)]
        times = {name: [] for name, _ in impls}
        for r in range(args.rounds):
            order = impls[r % len(impls):] + impls[: r % len(impls)]
            for name, force in order:
                myns.set_override("MYNS_MATMUL_KERNEL", force)
                fn = (lambda: torch.matmul(a, b)) if name == "torch" else (lambda: myns.matmul(a, b))
                times[name].append(sum(kernel_times(fn, args.calls).values()))
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        flop = 2.0 * m * k * n
        for name, t in times.items():
            med = statistics.median(t)
            print(f"{kind} {m}x{k}x{n} {lay} {name:8s} median {med:8.1f} us ({flop / med / 1e6:6.1f} TFLOP/s)  rounds " + " ".join(f"{x:.0f}" for x in t))
        del a, b


if __name__ == "__main__":
    main()
