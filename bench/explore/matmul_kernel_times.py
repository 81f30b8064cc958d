"""Exploration: which kernels one myns.matmul call queues, and how long each
runs on the GPU (torch.profiler), beside cuBLAS's, on the shapes where the
do_bench ratio is lowest (small squares, ragged, short K). Separates the
kernels' own time from the gaps and fixed costs that do_bench also counts.

    python bench/explore/matmul_kernel_times.py [--calls 30] [--set unaligned]

`--set kscan`: 1024 x K x 1024 for K from 64 to 4096 beside the usual
small and large squares: what a call costs besides its k-tiles.

`--set unaligned`: output rows TMA cannot store (N = 4095, vocabularies
32001 and 50257) beside their aligned neighbours, each also with
MYNS_MATMUL_TMA_STORE=off (the output stored from registers).

Operands as bench_matmul.py (a [M, K], b [K, N] row-major, or b = w^T for
"nk"). Prints per shape and implementation: the kernels with their mean
duration per call, and the wall time per call of the whole batch.
"""

import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from matmul_variants import operands  # noqa: E402

SETS = {  # --set: [(kind, M, K, N, b layout)]
    "default": [
        ("bf16", 512, 512, 512, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 4096, 1024, 4096, "nk"),
        ("tf32", 512, 512, 512, "kn"),
        ("tf32", 2048, 2048, 2048, "kn"),
        ("f32", 4096, 4096, 4096, "kn"),
    ],
    # K scan (2026-11-26): a fixed cost per call against a cost per k-tile, ours and cuBLAS's.
    "kscan": [
        ("bf16", 512, 512, 512, "kn"),
        ("bf16", 1024, 64, 1024, "kn"),
        ("bf16", 1024, 256, 1024, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 4096, 1024, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 4096, 4096, 4096, "kn"),
    ],
    "unaligned": [
        ("bf16", 4096, 4096, 4095, "kn"),
        ("bf16", 4096, 4096, 4096, "kn"),
        ("bf16", 4096, 4095, 4096, "kn"),
        ("bf16", 2048, 4096, 32001, "nk"),
        ("bf16", 2048, 4096, 32000, "nk"),
        ("bf16", 8192, 4096, 50257, "nk"),
        ("bf16", 8192, 4096, 50256, "nk"),
    ],
    # TF32 with K off 16 bytes (a's rows copied into padded ones) beside
    # its aligned neighbour (2026-12-01).
    "tf32u": [("tf32", 4096, 4095, 4096, "kn"), ("tf32", 4096, 4096, 4096, "kn"), ("tf32", 4096, 4096, 4095, "kn")],
    # float16 against bfloat16 on the same shapes (2026-12-01: the report's
    # f16 1024^3 ran 1.7 us longer a call than bf16 on the same tile).
    "f16gap": [(kind, m, m, m, lay) for m in (512, 1024, 2048) for lay in ("kn", "nk") for kind in ("bf16", "f16")],
    # One-wave squares and their neighbours (2026-12-01): 128 x 64 tiles
    # against 128 x 128 ones in two K ranges of a cluster, and pairs.
    "kc1024": [("bf16", m, k, n, lay) for (m, k, n) in ((1024, 1024, 1024), (1000, 1000, 1000), (512, 512, 512), (1024, 2048, 1024), (2048, 1024, 1024)) for lay in ("kn", "nk")],
    # LM heads and wide nn.Linear products (nn.Linear's weight), aligned
    # and not (2026-11-30): the widths and cluster pairs against each other,
    # with --variants wg192c1,wg192c2,wg256c1,wg256c2.
    "lm_head": [
        ("bf16", 2048, 4096, 32000, "nk"),
        ("bf16", 2048, 4096, 32001, "nk"),
        ("bf16", 2048, 4096, 128256, "nk"),
        ("bf16", 8192, 4096, 50256, "nk"),
        ("bf16", 8192, 4096, 50257, "nk"),
        ("bf16", 4096, 4096, 11008, "nk"),
        ("bf16", 4096, 4096, 11007, "nk"),
        ("bf16", 8192, 4096, 14336, "nk"),
    ],
    # M = 128 (2026-11-26, later): where a split-K call's time goes, with
    # --variants auto,wg64/2,wg256/8 and the like.
    "m128": [
        ("bf16", 128, 4096, 4096, "kn"),
        ("bf16", 128, 4096, 4096, "nk"),
        ("bf16", 128, 14336, 4096, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
    ],
    # fused_linear_cross_entropy's products on the Llama step's shape (8192 x
    # 2048, vocabulary 32000, chunks of 1024 rows; 2026-11-27): the weight
    # gradient d^T @ hidden (M-major a: "tn") at K = 1024 to 8192, which
    # separates a cost per tile from a cost per k-tile, the logits and
    # grad_hidden products, and K-major references.
    "flce": [
        ("bf16", 32000, 1024, 2048, "tn"),
        ("bf16", 32000, 2048, 2048, "tn"),
        ("bf16", 32000, 8192, 2048, "tn"),
        ("bf16", 32000, 1024, 2048, "kn"),
        ("bf16", 32000, 8192, 2048, "kn"),
        ("bf16", 1024, 2048, 32000, "nk"),
        ("bf16", 1024, 32000, 2048, "kn"),
        ("bf16", 4096, 1024, 4096, "kn"),
        ("bf16", 4096, 8192, 4096, "kn"),
    ],
    # FLCE's logits and grad_hidden products alone, at chunks of 1024 and 2048
    # rows, for --variants (bench/explore/step-profile/).
    "flce2": [(kind, m, k, n, lay) for kind in ("bf16",) for m in (1024, 2048) for (k, n, lay) in ((2048, 32000, "nk"), (32000, 2048, "kn"))],
    # Long K on less than a wave of tiles (2026-11-27): split K on wide tiles
    # against the unsplit narrow ones the planner took.
    "longk": [("bf16", m, k, n, "kn") for (m, n, k) in ((1024, 2048, 32000), (512, 4096, 14336), (1024, 1024, 8192), (1024, 2048, 8192), (2048, 1024, 8192), (768, 1024, 16384), (512, 2048, 8192), (256, 4096, 8192), (1024, 2048, 16384), (1024, 1024, 4096))],
    # Narrow tiles (rings of 8 stages or more: wg64, wg96, the 64-row
    # ping-pong ones), for bench/explore/kgroup/.
    "kgroup": [
        ("bf16", 512, 512, 512, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 1024, 1024, "nk"),
        ("bf16", 1024, 2048, 1024, "kn"),
        ("bf16", 1024, 2048, 1024, "nk"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("f16", 512, 512, 512, "kn"),
        ("bf16", 768, 2048, 2048, "nk"),
        ("bf16", 1280, 2048, 1024, "nk"),
        ("bf16", 2000, 2000, 600, "kn"),
        ("bf16", 64, 4096, 4096, "nk"),
        ("bf16", 128, 4096, 4096, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 4096, 4096, 4096, "kn"),
    ],
    # The A and B loaders in two threads (bench/explore/loop-stalls/): the
    # narrow tiles' products, the wider tiles' and TF32's.
    "loaders": [
        ("bf16", 512, 512, 512, "kn"),
        ("f16", 512, 512, 512, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 1024, 1024, "nk"),
        ("bf16", 1024, 2048, 1024, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 768, 2048, 2048, "nk"),
        ("bf16", 1280, 2048, 1024, "nk"),
        ("bf16", 1280, 1536, 3000, "nk"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 2000, 600, 2000, "kn"),
        ("bf16", 64, 4096, 4096, "nk"),
        ("bf16", 128, 4096, 4096, "kn"),
        ("bf16", 512, 3584, 18944, "nk"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 4096, 4096, 4096, "kn"),
        ("bf16", 4096, 4096, 14336, "nk"),
        ("tf32", 1024, 1024, 1024, "kn"),
        ("tf32", 4096, 4096, 4096, "kn"),
    ],
    # The report rows that fell at 300b0cf (loop-stalls/run5.sh), with the
    # batched ones (a sixth field: the batch).
    "loaders3": [
        ("bf16", 512, 512, 512, "kn"),
        ("f16", 512, 512, 512, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("f16", 1024, 1024, 1024, "kn"),
        ("bf16", 16, 4096, 4096, "kn"),
        ("bf16", 64, 4096, 4096, "nk"),
        ("bf16", 128, 4096, 4096, "kn"),
        ("bf16", 2000, 2000, 600, "kn"),
        ("bf16", 1280, 3000, 1536, "nk"),
        ("bf16", 4096, 14336, 4096, "nk"),
        ("bf16", 512, 512, 512, "kn", 32),
        ("bf16", 128, 64, 128, "kn", 256),
        ("tf32", 1024, 1024, 1024, "kn"),
    ],
    # The rows of loaders3 that moved by more than noise, again (run6.sh).
    "loaders4": [
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 512, 512, 512, "kn", 32),
        ("bf16", 128, 64, 128, "kn", 256),
        ("bf16", 2048, 2048, 2048, "kn", 8),
        ("tf32", 1024, 1024, 1024, "kn"),
    ],
    # The narrow tiles' products in pairs, for --variants (loop-stalls/).
    "loaders2": [
        ("bf16", 512, 512, 512, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 2048, 1024, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 768, 2048, 2048, "nk"),
        ("bf16", 1280, 2048, 1024, "nk"),
        ("bf16", 1280, 1536, 3000, "nk"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 2000, 600, 2000, "kn"),
    ],
    # The narrow tiles' cost per k-tile (1024 x 4096 x 1024 against 1024^3).
    "narrow": [
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 4096, 1024, "kn"),
        ("bf16", 1024, 4096, 1024, "nk"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 3000, 4000, 2000, "kn"),
    ],
    # The matmul report's small and mid-size shapes (the Hopper kernel's
    # start-up, bench/explore/hopper-pipeline/ab.sh).
    "start": [
        ("bf16", 512, 512, 512, "kn"),
        ("f16", 1024, 1024, 1024, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 4096, 1024, 4096, "nk"),
        ("bf16", 4096, 4096, 4096, "kn"),
    ],
    # Pairs or single blocks on the wide tiles, x @ W^T with a large N (LM
    # heads, FLCE's logits) and the Llama projections, by rows.
    "pairs": [(kind, m, k, n, "nk") for kind in ("bf16",) for (k, n) in ((2048, 32000), (4096, 32000), (4096, 128256), (4096, 14336), (4096, 4096)) for m in (1024, 2048, 4096, 8192)],
    # The rows of `pairs` where the automatic choice looked slow, for repeated rounds.
    "pairs2": [("bf16", 1024, 4096, 14336, "nk"), ("bf16", 1024, 2048, 32000, "nk"), ("bf16", 2048, 4096, 14336, "nk"), ("bf16", 8192, 4096, 32000, "nk")],
    # 192-wide tiles in pairs (2026-11-27, night; bench/explore/pair192/): an
    # N-major B ("kn") split between the ranks box by box (2 and 1 of 3) or
    # along K, beside K-major B ("nk"), which was always split evenly.
    "pair192": [
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 3000, 1000, 2000, "nk"),
        ("bf16", 3000, 4000, 2000, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("f16", 2048, 2048, 2048, "kn"),
        ("bf16", 4096, 4096, 4088, "kn"),
    ],
    # Rows 16- but not 128-byte aligned (2026-11-27, night): the planner's
    # `misaligned` efficiencies were fitted under 256-byte L2 promotion
    # (bench/explore/l2-traffic/misaligned-*.log, --variants of every width).
    "misaligned": [
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 2000, 2000, 2000, "kn"),
        ("bf16", 1000, 4000, 1000, "kn"),
        ("bf16", 4096, 4096, 4088, "kn"),
    ],
    # 64-wide tiles in pairs (B multicast) where B's k-lines are not
    # 128-byte aligned (2026-11-29, bench/explore/pair64-misaligned/): the
    # 1000^3 lead of bench/explore/h200-gaps/, over more shapes, with
    # --variants wg64,wg64c2,wg128,wg128c2.
    "pair64m": [("bf16", m, k, n, "kn") for (m, k, n) in ((1000, 1000, 1000), (1000, 4000, 1000), (2000, 1000, 1000), (1000, 1000, 2000), (500, 2000, 1000), (1500, 1500, 1500), (2000, 2000, 2000), (3000, 1000, 2000), (1000, 1000, 3000), (1000, 2000, 500), (1024, 1024, 1000))]
    + [("f16", 1000, 1000, 1000, "kn"), ("bf16", 1000, 1000, 1000, "tn"), ("bf16", 1024, 1024, 1024, "kn")],
    # Pairs side by side sharing A where A's rows are off 128 bytes (2026-12-01,
    # bench/explore/pair-n/): run with --variants wg64,wg64n2.
    "sharea": [(kind, m, k, n, lay) for (kind, m, k, n, lay) in (
        ("bf16", 1000, 1000, 1000, "kn"), ("bf16", 1000, 1000, 1000, "nk"), ("f16", 1000, 1000, 1000, "tn"),
        ("bf16", 800, 1000, 1000, "kn"), ("bf16", 1000, 1000, 1200, "nk"), ("bf16", 1100, 1000, 900, "kn"),
        ("bf16", 600, 1000, 2000, "nk"), ("bf16", 1000, 1500, 1000, "kn"), ("bf16", 1024, 1000, 1024, "kn"),
        ("bf16", 1024, 1000, 1024, "nk"), ("bf16", 1000, 3000, 1000, "nk"), ("bf16", 2000, 1000, 500, "kn"),
        ("bf16", 1024, 1024, 1024, "kn"))],
    # ... against the plan's K ranges in a cluster on longer K: --variants wg64n2.
    "sharea2": [("bf16", m, k, n, lay) for lay in ("kn", "nk") for (m, k, n) in (
        (1000, 2000, 1000), (1000, 3000, 1000), (1000, 4000, 1000), (1000, 6000, 1000), (1024, 3000, 1024),
        (900, 3000, 1100), (1100, 2000, 1000), (1000, 3000, 800))],
    # A stage freed before waiting for the next to land (2026-11-28,
    # bench/explore/early-release/): short and long K, every tile width, TF32.
    "release": [
        ("bf16", 512, 512, 512, "kn"),
        ("f16", 1024, 1024, 1024, "kn"),
        ("bf16", 1000, 1000, 1000, "kn"),
        ("bf16", 2048, 2048, 2048, "kn"),
        ("bf16", 3000, 1000, 2000, "kn"),
        ("bf16", 4096, 1024, 4096, "nk"),
        ("bf16", 1024, 4096, 1024, "kn"),
        ("bf16", 2048, 4096, 1024, "kn"),
        ("bf16", 3000, 4000, 2000, "kn"),
        ("bf16", 4096, 4096, 4096, "kn"),
        ("bf16", 4096, 8192, 4096, "kn"),
        ("bf16", 8192, 8192, 8192, "kn"),
        ("tf32", 2048, 2048, 2048, "kn"),
        ("tf32", 4096, 4096, 4096, "kn"),
    ],
    # TF32 on the Llama projections (bench/explore/tf32-llm/).
    "tf32llm": [("tf32", 4096, 4096, n, "nk") for n in (4096, 14336)] + [("tf32", 4096, 14336, 4096, "nk")],
    # Pairs (B multicast) against single blocks for TF32 with a K-major B
    # (bench/explore/tf32-llm/), with bfloat16 beside it.
    "tf32pairs": [(kind, m, k, n, "nk") for kind in ("tf32", "bf16") for (m, k, n) in ((4096, 4096, 4096), (4096, 4096, 14336), (4096, 14336, 4096), (8192, 4096, 14336), (8192, 14336, 4096), (4096, 4096, 1024), (8192, 8192, 8192), (2048, 4096, 32000))],
    # The pipeline probes (bench/explore/hopper-pipeline/probe.sh): one shape per
    # cooperative tile width, long K.
    # Pairs sharing B on one wave of 128 x 128 tiles over 16 rows
    # (2026-12-01, bench/explore/ragged/): N of 1000 and 1024, K aligned or not.
    "sharedb": [("bf16", m, k, n, lay) for lay in ("kn", "nk") for m in (2000, 2048) for k in (1000, 1024, 4000, 4096) for n in (1000, 1024)],
    "pipe": [
        ("bf16", 1024, 4096, 1024, "kn"),
        ("bf16", 2048, 4096, 1024, "kn"),
        ("bf16", 3000, 4000, 2000, "kn"),
        ("bf16", 4096, 8192, 4096, "kn"),
    ],
}


def kernel_times(fn, calls, skip=("zero", "fill"), flush_l2=True):
    """GPU time per call of each kernel `fn` queues, mean of `calls` calls
    each after an L2 flush (`flush_l2`; else back to back, the operands
    left in L2); kernels whose lower-cased name holds a `skip` word (the
    flush's own) are left out."""
    flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            if flush_l2:
                flush.zero_()
            fn()
        torch.cuda.synchronize()
    per = collections.defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and not any(w in e.name.lower() for w in skip):
            per[e.name] += e.device_time / calls
    return per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--set", choices=list(SETS), default="default")
    ap.add_argument("--variants", default="", help="comma-separated MYNS_MATMUL_KERNEL values to time besides the automatic choice")
    ap.add_argument("--store-off", action="store_true", help="also time the automatic choice storing its output from registers (the unaligned set always does)")
    ap.add_argument("--warm-l2", action="store_true", help="no L2 flush between calls")
    args = ap.parse_args()
    forced = [v for v in args.variants.split(",") if v]
    unaligned = args.set == "unaligned" or args.store_off
    for kind, m, k, n, lay, *batch in SETS[args.set]:
        batch = batch[0] if batch else 1
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        a, b = operands(kind, batch, m, k, n, lay)
        flop = 2.0 * batch * m * n * k
        mine = (lambda: myns.bmm(a, b)) if batch > 1 else (lambda: myns.matmul(a, b))
        impls = [("myns", mine, None), ("torch", lambda: torch.matmul(a, b), None)]
        if unaligned:
            impls.insert(1, ("myns tma_store=off", lambda: myns.matmul(a, b), "off"))
        impls[1:1] = [(f"myns {v}", lambda: myns.matmul(a, b), None) for v in forced]
        for name, fn, store in impls:
            myns.set_override("MYNS_MATMUL_TMA_STORE", store)
            myns.set_override("MYNS_MATMUL_KERNEL", name[5:] if name.startswith("myns ") and store is None and name[5:] in forced else None)
            try:
                per = kernel_times(fn, args.calls, flush_l2=not args.warm_l2)
            except RuntimeError as e:  # a forced variant that does not fit the shape
                print(f"{kind} {m}x{k}x{n} {lay} {name}: {str(e).splitlines()[0][:120]}")
                continue
            total = sum(per.values())
            shape = f"{batch}x{m}x{k}x{n}" if batch > 1 else f"{m}x{k}x{n}"
            print(f"{kind} {shape} {lay} {name}: kernels {total:.1f} us per call ({flop / total / 1e6:.1f} TFLOP/s)")
            for kn, t in sorted(per.items(), key=lambda kv: -kv[1]):
                print(f"    {t:8.1f} us  {kn[:110]}")
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        del a, b


if __name__ == "__main__":
    main()
