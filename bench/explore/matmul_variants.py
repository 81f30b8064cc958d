"""Exploration: forced kernel variants (MYNS_MATMUL_KERNEL) against cuBLAS on
the shapes that set the automatic choice, each result checked against its
elementwise float64 bound (on sampled rows). One do_bench median per variant,
cuBLAS timed before and after the variants of a shape (its median of two).

    python bench/explore/matmul_variants.py [--out DIR] [--only decode,square]

Prints one line per (shape, variant) as it goes and a table at the end;
writes `matmul-variants.json` under --out.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from bench_matmul import KINDS, bound_share  # noqa: E402

# (group, kind, batch, m, k, n, b_layout, variants)
SQ = ["auto", "wg256", "wg128", "wgp128", "wgp64"]
CASES = [
    ("square", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg64", "wgp64", "wg128", "wgp128", "64"]),
    ("square", "bf16", 1, 1024, 1024, 1024, "kn", SQ + ["wg64"]),
    ("square", "bf16", 1, 2048, 2048, 2048, "kn", SQ + ["wg128/2", "wgp128/2"]),
    ("square", "bf16", 1, 4096, 4096, 4096, "kn", SQ),
    ("square", "bf16", 1, 8192, 8192, 8192, "kn", ["auto", "wg256", "wgp128"]),
    ("square", "bf16", 1, 4096, 4096, 4096, "nk", ["auto", "wg256", "wgp128"]),
    ("square", "bf16", 1, 4096, 4096, 4096, "tn", ["auto", "wg256", "wgp128"]),
    ("llm", "bf16", 1, 4096, 4096, 14336, "nk", ["auto", "wg256", "wgp128"]),
    ("llm", "bf16", 1, 8192, 14336, 4096, "nk", ["auto", "wg256", "wgp128"]),
    ("llm", "bf16", 1, 4096, 4096, 1024, "nk", ["auto", "wg256", "wg128", "wgp128", "wgp64"]),
    ("ragged", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256", "wg128", "wgp128", "wgp64", "wg64"]),
    ("ragged", "bf16", 1, 4096, 4096, 4088, "kn", ["auto", "wg256", "wgp128"]),
    ("ragged", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg128", "wgp128", "wgp64", "wg64"]),
    ("decode", "bf16", 1, 1, 4096, 4096, "kn", ["auto", "skinny/1", "skinny/2", "skinny/4", "skinny/8", "16/8", "nowg", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("decode", "bf16", 1, 1, 4096, 14336, "kn", ["auto", "skinny/1", "skinny/2", "skinny/4"]),
    ("decode", "bf16", 1, 1, 14336, 4096, "kn", ["auto", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("decode", "bf16", 1, 1, 4096, 4096, "nk", ["auto", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("decode", "bf16", 1, 1, 4096, 128256, "nk", ["auto", "skinny/1", "skinny/2"]),
    ("decode", "bf16", 1, 16, 4096, 4096, "kn", ["auto", "skinny/2", "skinny/4", "skinny/8", "16/4", "nowg", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("decode", "bf16", 1, 16, 4096, 14336, "kn", ["auto", "skinny/1", "skinny/2", "skinny/4"]),
    ("decode", "bf16", 1, 16, 14336, 4096, "kn", ["auto", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("decode", "bf16", 1, 16, 4096, 4096, "nk", ["auto", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    # The streaming build's rings (src/gemm/plan.rs skinny_tma_plan), float32
    # (FFMA consumers, K split in two at 64 strips) beside bf16.
    ("ring", "f32", 1, 1, 4096, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma16", "skinny_tma8"]),
    ("ring", "f32", 1, 16, 4096, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2"]),
    ("ring", "f32", 1, 1, 4096, 14336, "nk", ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma4"]),
    ("ring", "f32", 1, 16, 4096, 14336, "nk", ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 1, 4096, 4096, "kn", ["auto", "skinny_tma16", "skinny_tma8"]),
    ("ring", "bf16", 1, 1, 4096, 14336, "kn", ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 16, 4096, 14336, "kn", ["auto", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 16, 4096, 14336, "nk", ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 1, 4096, 16384, "nk", ["auto", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 1, 4096, 32000, "nk", ["auto", "skinny_tma16", "skinny_tma8"]),
    ("ring", "bf16", 1, 1, 3584, 18944, "nk", ["auto", "skinny_tma8", "skinny_tma4"]),
    ("ring", "bf16", 1, 16, 4096, 20480, "nk", ["auto", "skinny_tma8", "skinny_tma4"]),
    ("ring", "f32", 1, 1, 3584, 18944, "nk", ["auto", "skinny_tma8", "skinny_tma4"]),
    ("ring", "f32", 1, 16, 3584, 18944, "nk", ["auto", "skinny_tma8", "skinny_tma4"]),
    # 64 strips (N = 4096) leave half the SMs idle on one block per strip:
    # K split over a cluster of 2 or 4, on the shallower rings, so that the
    # 128 or 256 blocks all fit at once.
    ("split", "bf16", 1, 1, 4096, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "bf16", 1, 1, 4096, 4096, "nk", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "bf16", 1, 16, 4096, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "bf16", 1, 1, 14336, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "bf16", 1, 16, 14336, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "bf16", 1, 1, 14336, 4096, "nk", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "f32", 1, 1, 4096, 4096, "kn", ["auto", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("split", "f32", 1, 16, 4096, 4096, "kn", ["auto", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("decode", "bf16", 1, 32, 4096, 4096, "kn", ["auto", "wg64", "wgp64", "wg64/2", "64/2", "nowg"]),
    ("decode", "bf16", 1, 64, 4096, 4096, "kn", ["auto", "wg64", "wgp64", "wg64/2", "wgp64/2", "nowg"]),
    ("decode", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wg64", "wgp64", "wgp128", "wg128", "wg64/2", "wgp64/2"]),
    ("decode", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wg256", "wg128", "wgp128", "wgp64"]),
    ("decode", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wg64/2", "wgp64/2", "wgp128/2", "wgp64/4"]),
    ("unaligned", "bf16", 1, 4096, 4096, 4095, "kn", ["auto", "wgp128"]),
    ("unaligned", "bf16", 1, 4096, 4095, 4096, "kn", ["auto", "wgp128"]),
    ("unaligned", "bf16", 1, 2048, 32001, 4096, "kn", ["auto"]),
    ("unaligned", "bf16", 1, 2048, 32000, 4096, "kn", ["auto"]),
    ("unaligned", "bf16", 1, 2048, 4096, 32001, "nk", ["auto"]),
    ("unaligned", "bf16", 1, 2048, 4096, 32000, "nk", ["auto"]),
    ("bmm", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg64", "wgp64", "wg128", "wgp128", "wg256"]),
    ("bmm", "bf16", 8, 2048, 2048, 2048, "kn", ["auto", "wg256", "wgp128"]),
    ("bmm", "bf16", 256, 128, 64, 128, "kn", ["auto", "wg64", "wgp64", "wg128"]),
    ("tf32", "tf32", 1, 4096, 4096, 4096, "kn", ["auto", "wg256", "wgr"]),
    ("tf32", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wg256", "wg128"]),
    ("tf32", "tf32", 1, 128, 4096, 4096, "kn", ["auto"]),
    ("tf32", "tf32", 1, 1, 4096, 4096, "kn", ["auto", "16/8"]),
    ("f32", "f32", 1, 4096, 4096, 4096, "kn", ["auto"]),
    ("f32", "f32", 1, 1, 4096, 4096, "kn", ["auto", "16/8"]),
    # 2026-11-28 (--only h200gaps): the report's rows below target on the
    # H200, whose planner costs were fitted on the H100: 64-row tiles, split
    # K and pairs around the automatic choice.
    ("h200gaps", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg64", "wgh64", "wgh128", "wg64/2", "wgh64/2", "wg128/2"]),
    ("h200gaps", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg64", "wg64c2", "wgp64", "wg128", "wg128/2", "wgh64", "wgh128", "wgh64/2", "wg64/2"]),
    ("h200gaps", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg64", "wg128", "wgh64", "wgh128", "wg128/2", "wg64/2"]),
    ("h200gaps", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256c2", "wg192", "wg192c1", "wg128", "wgh128", "wg256/2"]),
    ("h200gaps", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64", "wgh64/2", "wgh64/4", "wgh128", "wgh128/2", "wgh128/4", "wg64/2", "wg64/4", "wg128/4"]),
    ("h200gaps", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wgh64", "wgh64/2", "wgh128", "wgh128/2", "wg64/2", "wg64/4"]),
    ("h200gaps", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wgh64", "wgh64/2", "wgh128/2", "wg64/2", "wg64/4"]),
    ("h200gaps", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wgh64", "wgh128", "wg64", "wg128"]),
    ("h200gaps", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg64", "wg128", "wgh64", "wgh128", "wg256"]),
    ("h200gaps", "bf16", 8, 2048, 2048, 2048, "kn", ["auto", "wg256c1", "wg192", "wgp128"]),
    ("h200gaps", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr64", "wgr128", "wgr64/2", "wgr128/2", "wg128", "wg64"]),
    ("h200gaps", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgr128", "wgr192", "wgr256", "wg256", "wg128"]),
    ("h200gaps", "tf32", 1, 4096, 4096, 4096, "kn", ["auto", "wgr192", "wgr256", "wg256", "wg256c1"]),
    ("h200gaps", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgr64/2", "wgr64/4", "wgr128/2", "wgr128/4", "wgr128/8"]),
    # 2026-11-28 (--only pairs64): pairs of blocks (B multicast) on the
    # 64-row and 64-wide tiles, which cuBLAS runs in pairs at M = 128
    # (nvjet 64 x 64, cluster 2 x 1) and 1024^3 (128 x 64, 1 x 2).
    ("pairs64", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64c2", "wgh64c2/2", "wgh128c2", "wgh128c2/2", "wg64c2/2", "wg64/2"]),
    ("pairs64", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wgh64c2", "wgh64c2/2", "wgh128c2", "wgh128c2/2", "wg64c2/2", "wg64/2"]),
    ("pairs64", "bf16", 1, 256, 4096, 4096, "kn", ["auto", "wgh64c2", "wgh128c2", "wg64c2", "wg128c2"]),
    ("pairs64", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wgh64c2", "wgh64c2/2", "wgh128c2/2", "wg64c2/2"]),
    ("pairs64", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wgh64c2", "wgh128c2", "wg128c2"]),
    ("pairs64", "bf16", 1, 128, 4096, 14336, "nk", ["auto", "wgh64c2", "wgh128c2", "wg128c2"]),
    ("pairs64", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg64c2", "wgh64c2", "wgh128c2"]),
    ("pairs64", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg64c2", "wgh128c2", "wgh64c2", "wgp64c2"]),
    ("pairs64", "bf16", 1, 1024, 1024, 1024, "nk", ["auto", "wg64c2", "wgh128c2"]),
    ("pairs64", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wgh128c2", "wg64c2", "wg128c2"]),
    ("pairs64", "bf16", 1, 2048, 4096, 1024, "nk", ["auto", "wg64c2", "wg128c2", "wgh128c2"]),
    ("pairs64", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg64c2", "wg128c2", "wgh128c2"]),
    ("pairs64", "bf16", 256, 128, 64, 128, "kn", ["auto", "wg64c2", "wg128c2", "wgh64c2", "wgh128c2"]),
    # 2026-11-28 (--only tf32tma): TF32 after the TMA loads took over the
    # rounding (bench/explore/tf32-tma/): the register-A kernel in pairs
    # (`wgr...c2`, B' = a's tile multicast), and the K-major kernel with
    # both operands in place (nk) against a copied b (kn).
    ("tf32tma", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr128", "wgr128c2", "wgr64c2", "wg128"]),
    ("tf32tma", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgr256c2", "wgr192", "wgr192c2", "wgr128c2", "wg256"]),
    ("tf32tma", "tf32", 1, 4096, 4096, 4096, "kn", ["auto", "wgr256c2", "wgr192c2", "wg256", "wg256c2"]),
    ("tf32tma", "tf32", 1, 8192, 8192, 8192, "kn", ["auto", "wgr256c2", "wgr192c2"]),
    ("tf32tma", "tf32", 1, 4096, 4096, 4096, "nk", ["auto", "wg256c1", "wg256c2", "wgr256", "wg192"]),
    ("tf32tma", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgr128c2/4", "wgr64c2/2", "wgr128/2"]),
    ("tf32tma", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr64", "wgr64c2", "wg64", "128"]),
    ("tf32tma", "tf32", 1, 256, 1024, 1024, "nk", ["auto", "wg64", "wg128", "128", "64/2"]),
    # 2026-11-28 (--only kstep): the register-A kernel with a wgmma group per
    # k-step (bench/explore/tf32-kstep/), per tile width, against a library
    # without it.
    ("kstep", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr64", "wgr128"]),
    ("kstep", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr64", "wgr128", "wgr192", "wgr256"]),
    ("kstep", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgr64", "wgr128", "wgr192", "wgr256"]),
    ("kstep", "tf32", 1, 4096, 4096, 4096, "kn", ["auto", "wgr128", "wgr192", "wgr256"]),
    ("kstep", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgr64/2", "wgr128/2"]),
    # 2026-11-28 (--only tf32h): the register-A kernel ping-pong on 64-row
    # tiles (`wgrh`: one m64n128 or m64n64 wgmma chain per tile, as cuBLAS
    # runs TF32 1024^3 on 64 x 128 tiles) against the cooperative widths.
    ("tf32h", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr64", "wgrh128", "wgrh64", "wgrh64/2", "wgrh128/2", "wgrh128/4"]),
    ("tf32h", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr64", "wgrh128", "wgrh64", "wgrh128c2", "wgrh128/2"]),
    ("tf32h", "tf32", 1, 1000, 1000, 1000, "kn", ["auto", "wgrh128", "wgrh64"]),
    ("tf32h", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgrh128", "wgrh128c2"]),
    ("tf32h", "tf32", 1, 4096, 4096, 4096, "kn", ["auto", "wgrh128"]),
    ("tf32h", "tf32", 1, 3000, 1000, 2000, "kn", ["auto", "wgrh128", "wgrh64"]),
    ("tf32h", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgrh128", "wgrh128/2", "wgrh64", "wgrh64/2"]),
    ("tf32h", "tf32", 1, 32, 4096, 4096, "kn", ["auto", "wgrh64", "wgrh64/2", "wgrh64/4"]),
    ("tf32h", "tf32", 1, 64, 4096, 4096, "kn", ["auto", "wgrh64/2", "wgrh128/2", "wgrh64/4"]),
    ("tf32h", "tf32", 1, 128, 14336, 4096, "kn", ["auto", "wgrh128/2", "wgrh128"]),
    ("tf32h", "tf32", 1, 256, 4096, 4096, "kn", ["auto", "wgrh128", "wgrh64", "wgrh128/2"]),
    # 2026-11-29 (--only kclus): a tile's K ranges as the blocks of one
    # cluster, summed in distributed shared memory (`k2`, `k4`), where the
    # tiles alone leave most SMs idle, against the automatic choice and
    # the global split (`/2`).
    ("kclus", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg64", "wg64k2", "wg64k4", "wg128k4", "wgh64"]),
    ("kclus", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg128", "wg128k2", "wg64", "wgh128"]),
    ("kclus", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg64", "wg128k2"]),
    ("kclus", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64", "wg64k2", "wg128k4", "wg128k2", "wg64/2"]),
    ("kclus", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wgh64", "wg64k2", "wg128k4"]),
    ("kclus", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wg64/2", "wgh64", "wg64k2", "wg128k4"]),
    ("kclus", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wgh64", "wgh128", "wg64k2", "wg128k2"]),
    ("kclus", "bf16", 1, 64, 4096, 4096, "kn", ["auto", "wg64k2", "wg128k4"]),
    ("kclus", "bf16", 1, 256, 4096, 4096, "kn", ["auto", "wg64", "wg128k2", "wg192k4"]),
    ("kclus", "bf16", 1, 1024, 4096, 1024, "kn", ["auto", "wg64", "wg128k2"]),
    ("kclus", "bf16", 1, 1024, 8192, 1024, "kn", ["auto", "wg128/2", "wg128k2"]),
    ("kclus", "bf16", 1, 512, 4096, 512, "kn", ["auto", "wg64k4", "wg128k4"]),
    ("kclus", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr64k2", "wgr64k4", "wgr128k4"]),
    ("kclus", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr128k2", "wgr64"]),
    ("kclus", "tf32", 1, 1000, 1000, 1000, "kn", ["auto", "wgr128k2"]),
    ("kclus", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgrh128/2", "wgr64k2", "wgr128k4"]),
    ("kclus", "tf32", 1, 128, 14336, 4096, "kn", ["auto", "wgr128/4", "wgr64k2"]),
    ("kclus", "tf32", 1, 256, 4096, 4096, "kn", ["auto", "wgrh128", "wgr128k2", "wgr192k4"]),
    # 2026-11-26 (--only small32): TF32 and float32 where the report is
    # lowest (small squares, M = 128), Hopper register-A against mma.sync
    # (no rounding copy) and the CUDA-core tiles with split K.
    ("small32", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr", "wgr64", "wgr128", "wgr64/2", "wgr128/2", "64", "128", "64/2", "16/4", "wg64", "wg128"]),
    ("small32", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr", "wgr64", "wgr128", "wgr128/2", "64", "128", "256", "64/2", "wg128"]),
    ("small32", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgr", "wgr128", "wgr192", "wgr256", "128", "256", "wg128", "wg256"]),
    ("small32", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgr64", "wgr128", "wgr64/2", "wgr128/2", "wgr128/4", "64/2", "128/2", "64/4"]),
    ("small32", "f32", 1, 128, 4096, 4096, "kn", ["auto", "64", "128", "256", "64/2", "128/2", "64/4", "128/4", "16/4"]),
    ("small32", "f32", 1, 512, 512, 512, "kn", ["auto", "64", "128", "64/2", "16/4", "16"]),
    # --only simtsplit: the float32 CUDA-core tiles where the widest tiles
    # leave SMs idle (the automatic choice took 64 x 64 tiles split over K).
    ("simtsplit", "f32", 1, 64, 4096, 4096, "kn", ["auto", "128/2", "128/4", "128/8", "64/2", "64/4", "16", "16/2", "16/4"]),
    ("simtsplit", "f32", 1, 128, 4096, 4096, "kn", ["auto", "128/2", "128/4", "128/8", "64/2", "64/4", "16", "16/2", "256/4"]),
    ("simtsplit", "f32", 1, 256, 4096, 4096, "kn", ["auto", "128/2", "128/4", "128/8", "64/2", "64/4", "16", "256/2", "256/4"]),
    ("simtsplit", "f32", 1, 128, 4096, 4096, "nk", ["auto", "128/4", "128/8", "64/4", "16", "16/2"]),
    ("simtsplit", "f32", 1, 512, 512, 512, "kn", ["auto", "128/2", "128/4", "128/8", "64/2", "16", "16/2"]),
    ("simtsplit", "f32", 1, 1024, 1024, 1024, "kn", ["auto", "128", "128/2", "128/4", "64", "64/2", "16", "256/2"]),
    ("simtsplit", "f32", 1, 256, 1024, 1024, "kn", ["auto", "128/2", "128/4", "128/8", "64/2", "16", "16/2"]),
    ("simtsplit", "f32", 1, 2048, 2048, 2048, "kn", ["auto", "128", "256/2", "128/2"]),
    ("simtsplit", "f32", 1, 512, 4096, 512, "kn", ["auto", "128/4", "128/8", "64/2", "64/4", "16", "16/2"]),
    # Run at ed97bc9 (--only planner2): the mma.sync tiles against the Hopper
    # ones where the report is lowest (bmm, ragged, small squares, TF32 decode).
    ("planner2", "bf16", 256, 128, 64, 128, "kn", ["auto", "128", "64", "256", "wg64", "wgp64", "wg128"]),
    ("planner2", "bf16", 32, 512, 512, 512, "kn", ["auto", "128", "64", "256", "wg128", "wgp128", "wg256", "wgp64"]),
    ("planner2", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "256", "128", "wg256", "wgp128", "wg128", "wg256/2"]),
    ("planner2", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "128", "64", "wgp64", "wg64", "wgp128", "64/2"]),
    ("planner2", "bf16", 1, 512, 512, 512, "kn", ["auto", "128", "64", "64/2", "wg64", "wgp64", "wg64/2"]),
    ("planner2", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "128", "256", "wg128", "wgp128", "wgp64"]),
    ("planner2", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "256", "128", "wg256", "wgp128", "wg128"]),
    ("planner2", "bf16", 1, 4096, 4096, 4088, "kn", ["auto", "wg256", "wgp128", "256"]),
    ("planner2", "tf32", 1, 512, 512, 512, "kn", ["auto", "128", "64", "64/2", "wg64", "wgr64"]),
    ("planner2", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "256", "128", "wg128", "wgr128", "wgr"]),
    ("planner2", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "256", "128", "wg256", "wgr256", "wgr"]),
    ("planner2", "tf32", 1, 1, 4096, 4096, "kn", ["auto", "16/2", "16/4", "16/8", "16/16"]),
    ("planner2", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wg64/2", "wgp64/2", "128", "64/2", "128/2", "wg128/2"]),
    ("planner2", "f32", 1, 4096, 4096, 4096, "kn", ["auto", "128", "64"]),
    # 2026-11-25 (--only cluster): pairs of blocks sharing B through TMA
    # multicast (`c2`) against single blocks (`c1`).
    ("cluster", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 4096, 4096, 4096, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 8192, 8192, 8192, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 4096, 4096, 4096, "nk", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "f16", 1, 4096, 4096, 4096, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 8192, 4096, 14336, "nk", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 8192, 14336, 4096, "nk", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 4096, 4096, 1024, "nk", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 4096, 4096, 4088, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg128c1", "wg128c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg128c1", "wg128c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 8, 2048, 2048, 2048, "kn", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg128c1", "wg128c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "bf16", 1, 2048, 4096, 32000, "nk", ["auto", "wg256c1", "wg256c2", "wgp128c1", "wgp128c2"]),
    ("cluster", "tf32", 1, 4096, 4096, 4096, "nk", ["auto", "wg256c1", "wg256c2"]),
    # 2026-11-25 (--only planner3): the tiles after the TMA-store epilogue.
    ("planner3", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 4096, 4096, 4096, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 256, 128, 64, 128, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "bf16", 1, 4096, 4096, 1024, "nk", ["auto", "wg256c1", "wg256c2", "wg128", "wgp128", "wg64", "wgp64"]),
    ("planner3", "tf32", 1, 4096, 4096, 4096, "nk", ["auto", "wg256c1", "wg256c2", "wg128"]),
    ("planner3", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wg256", "wg128", "wgr"]),
    # 2026-11-25 (--only simt2): float32 on the CUDA cores, 256 x 128 and 128 x 256 tiles
    # (16 x 8 and 8 x 16 per thread, as cuBLAS's 256 x 128 SGEMM) against 128 x 128
    # (log matmul-variants-h100-simt2.log, which also has 128 x 256, `256n`, since dropped).
    ("simt2", "f32", 1, 8192, 8192, 8192, "kn", ["auto", "256", "128"]),
    ("simt2", "f32", 1, 4096, 4096, 4096, "kn", ["auto", "256", "128"]),
    ("simt2", "f32", 1, 4096, 4096, 4096, "nk", ["auto", "256", "128"]),
    ("simt2", "f32", 1, 4096, 4096, 4096, "tn", ["auto", "256", "128"]),
    ("simt2", "f32", 1, 2048, 2048, 2048, "kn", ["auto", "256", "128", "64/2"]),
    ("simt2", "f32", 1, 1024, 1024, 1024, "kn", ["auto", "256", "128", "64", "64/2"]),
    ("simt2", "f32", 1, 512, 512, 512, "kn", ["auto", "128", "64", "64/2"]),
    ("simt2", "f32", 8, 2048, 2048, 2048, "kn", ["auto", "256", "128"]),
    # 2026-11-25 (--only simt3): the cp.async SIMT kernel: 4 stages of BK = 8 against 3 of
    # BK = 16 (half the barriers) and 3 of BK = 8 (logs matmul-variants-h100-simt3.log and
    # -simt4.log; 3 stages of BK = 16 won and became `256` and `128`, the other names were dropped).
    ("simt3", "f32", 1, 8192, 8192, 8192, "kn", ["auto", "256", "256k16", "256s3"]),
    ("simt3", "f32", 1, 4096, 4096, 4096, "kn", ["auto", "256", "256k16", "256s3", "128", "128k16"]),
    ("simt3", "f32", 1, 4096, 4096, 4096, "nk", ["auto", "256", "256k16", "256s3"]),
    ("simt3", "f32", 1, 4096, 4096, 4096, "tn", ["auto", "256", "256k16", "256s3"]),
    ("simt3", "f32", 1, 2048, 2048, 2048, "kn", ["auto", "256", "256k16", "128", "128k16", "64/2"]),
    ("simt3", "f32", 1, 1024, 1024, 1024, "kn", ["auto", "128", "128k16", "64", "64/2"]),
    ("simt3", "f32", 1, 512, 512, 512, "kn", ["auto", "128", "128k16", "64", "64/2"]),
    # 2026-11-25 (--only simt4): simt3's tiles after the column-major multiply-add order
    # (fewer register-bank conflicts: bench/explore/sass_banks.py).
    ("simt4", "f32", 1, 8192, 8192, 8192, "kn", ["auto", "256", "256k16", "256s3"]),
    ("simt4", "f32", 1, 4096, 4096, 4096, "kn", ["auto", "256", "256k16", "256s3", "128", "128k16"]),
    ("simt4", "f32", 1, 4096, 4096, 4096, "nk", ["auto", "256", "256k16"]),
    ("simt4", "f32", 1, 4096, 4096, 4096, "tn", ["auto", "256", "256k16"]),
    ("simt4", "f32", 1, 2048, 2048, 2048, "kn", ["auto", "256", "256k16", "128", "128k16", "64/2"]),
    ("simt4", "f32", 1, 1024, 1024, 1024, "kn", ["auto", "128", "128k16", "64", "64/2"]),
    ("simt4", "f32", 1, 512, 512, 512, "kn", ["auto", "64", "64/2", "64/4"]),
    ("simt4", "f32", 8, 2048, 2048, 2048, "kn", ["auto", "256", "256k16"]),
    # 2026-11-25 (--only wide192): the 192-wide tile (wave quantization) against its neighbours.
    ("wide192", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256", "wg192", "wg192c2", "wg192c1", "wg128"]),
    ("wide192", "bf16", 1, 3000, 1000, 2000, "nk", ["auto", "wg256", "wg192", "wg192c2", "wg192c1", "wg128"]),
    ("wide192", "f16", 1, 3000, 1000, 2000, "kn", ["auto", "wg256", "wg192", "wg128"]),
    ("wide192", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg192", "wg128"]),
    ("wide192", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "wg256", "wg192", "wg192c2"]),
    ("wide192", "bf16", 1, 4096, 4096, 4096, "kn", ["auto", "wg256", "wg192", "wg192c2"]),
    ("wide192", "bf16", 1, 4096, 4096, 1024, "nk", ["auto", "wg256c2", "wg192", "wg192c2", "wg128"]),
    ("wide192", "bf16", 1, 4096, 4096, 4088, "kn", ["auto", "wg256", "wg192", "wg192c2"]),
    ("wide192", "bf16", 1, 2048, 4096, 32000, "nk", ["auto", "wg192", "wg192c2"]),
    ("wide192", "bf16", 1, 8192, 4096, 14336, "nk", ["auto", "wg192", "wg192c2"]),
    ("wide192", "bf16", 8, 2048, 2048, 2048, "kn", ["auto", "wg192", "wg192c2"]),
    ("wide192", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg192", "wg128"]),
    ("wide192", "tf32", 1, 2048, 2048, 2048, "kn", ["auto", "wgr", "wgr192"]),
    ("wide192", "tf32", 1, 3000, 1000, 2000, "kn", ["auto", "wgr", "wgr192", "wgr256"]),
    # 2026-11-26, later (--only gaps5): the report's lowest rows at 41c054c
    # (M = 128 decode, small TF32, ragged) against split counts beyond the
    # planner's K / 2048 cap and the mma.sync tiles.
    ("gaps5", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wg64/2", "wg64/4", "wg128/2", "wg128/4", "wg128/8", "wg256/4", "wg256/8", "wg192/4", "64/4", "128/4"]),
    ("gaps5", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wg64/2", "wg64/4", "wg128/4", "wg128/8", "wg256/8", "wg256/16"]),
    ("gaps5", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wg64/2", "wg64/4", "wg128/4", "wg256/8"]),
    ("gaps5", "tf32", 1, 512, 512, 512, "kn", ["auto", "wgr64", "wgr128", "wgr64/2", "64", "128", "64/2", "wg64", "wg128"]),
    ("gaps5", "tf32", 1, 1024, 1024, 1024, "kn", ["auto", "wgr64", "wgr128", "wgr128/2", "64", "128", "wg128", "wg64"]),
    ("gaps5", "tf32", 1, 128, 4096, 4096, "kn", ["auto", "wgr128/2", "wgr128/4", "wgr128/8", "wgr64/4", "64/4", "16/4"]),
    ("gaps5", "tf32", 1, 1, 4096, 4096, "kn", ["auto", "16/4", "16/8", "16/16", "16/32"]),
    ("gaps5", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wg64", "wg64c1", "wg128", "wg128c2", "wg64/2", "128", "64"]),
    ("gaps5", "bf16", 1, 512, 512, 512, "kn", ["auto", "wg64", "wg64/2", "wg64/4", "wg128/4", "64", "64/2"]),
    ("gaps5", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wg192c2", "wg192c1", "wg256c2", "wg128", "wg128c2", "wg64", "wg256/2", "wg128/2"]),
    ("gaps5", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wg64", "wg128", "wg128c2", "wg64/2", "wg128/2", "64"]),
    ("gaps5", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "wg256", "wg128/2", "wg256/2"]),
    ("gaps5", "bf16", 1, 4096, 1024, 4096, "nk", ["auto", "wg256/2", "wg128/2"]),
    ("gaps5", "bf16", 1, 16, 4096, 4096, "kn", ["auto", "wg64/2", "wg64/4"]),
    ("gaps5", "bf16", 1, 64, 4096, 4096, "kn", ["auto", "wg64", "wg64/2", "wg64/4"]),
    ("gaps5", "bf16", 1, 256, 4096, 4096, "kn", ["auto", "wg64", "wg64/2", "wg128/2", "wg128/4"]),
    # 2026-11-26, evening (--only half): the 64-row ping-pong tiles (`wgh`)
    # against the 128-row tiles on the shapes that leave SMs idle.
    ("half", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64", "wgh128", "wgh64/2", "wg64/2", "wgp64/2"]),
    ("half", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wgh64", "wgh128", "wg64/2"]),
    ("half", "f16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64", "wg64/2"]),
    ("half", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wgh64", "wgh64/2", "wgh128/2", "wg64/2"]),
    ("half", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wgh64", "wgh128", "wg128", "wg256"]),
    ("half", "bf16", 1, 64, 4096, 4096, "kn", ["auto", "wgh64", "wgh64/2", "wg64/2"]),
    ("half", "bf16", 1, 32, 4096, 4096, "kn", ["auto", "wgh64", "wgh64/2", "wg64/2"]),
    ("half", "bf16", 1, 256, 4096, 4096, "kn", ["auto", "wgh64", "wgh128", "wg64"]),
    ("half", "bf16", 1, 512, 512, 512, "kn", ["auto", "wgh64", "wgh128", "wgh64/2", "wg64", "wg64/2"]),
    ("half", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wgh64", "wgh128", "wg128", "wg64"]),
    ("half", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wgh64", "wgh128", "wg128", "wg64"]),
    ("half", "bf16", 1, 2048, 2048, 2048, "kn", ["auto", "wgh128", "wg256", "wg128"]),
    ("half", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wgh128", "wgh64", "wg192c2"]),
    ("half", "bf16", 32, 512, 512, 512, "kn", ["auto", "wgh128", "wgh64", "wg128"]),
    ("half", "bf16", 256, 128, 64, 128, "kn", ["auto", "wgh128", "wgh64", "wg64"]),
    ("half", "bf16", 1, 4096, 4096, 1024, "nk", ["auto", "wgh128", "wg256c2"]),
    # (--only half2) The 64-row tiles in pairs sharing B (`c2`), as cuBLAS runs M = 128
    # (run with wg_cluster allowing them pairs; slower, so since clamped to single blocks).
    ("half2", "bf16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64c1", "wgh64c2", "wgh128c2", "wg64/2"]),
    ("half2", "bf16", 1, 128, 4096, 4096, "nk", ["auto", "wgh64c1", "wgh64c2", "wgh128c2"]),
    ("half2", "f16", 1, 128, 4096, 4096, "kn", ["auto", "wgh64c1", "wgh64c2"]),
    ("half2", "bf16", 1, 128, 14336, 4096, "kn", ["auto", "wgh64c2", "wgh128c2", "wgh128c2/2", "wgh64c2/2"]),
    ("half2", "bf16", 1, 128, 4096, 14336, "kn", ["auto", "wgh64c2", "wgh128c2"]),
    ("half2", "bf16", 1, 256, 4096, 4096, "kn", ["auto", "wgh64c2", "wgh128c2"]),
    ("half2", "bf16", 1, 512, 512, 512, "kn", ["auto", "wgh64c2", "wgh64c1", "wg64"]),
    ("half2", "bf16", 1, 1000, 1000, 1000, "kn", ["auto", "wgh64c2", "wgh128c2"]),
    ("half2", "bf16", 1, 1024, 1024, 1024, "kn", ["auto", "wgh64c2", "wgh128c2"]),
    ("half2", "bf16", 1, 3000, 1000, 2000, "kn", ["auto", "wgh128c2"]),
    ("half2", "bf16", 32, 512, 512, 512, "kn", ["auto", "wgh128c2", "wgh64c2"]),
    # float32 (TF32 off) on the FP64 tensor-core tile split over K (2026-11-28):
    # the split's float32 partials give up correct rounding, not the float32 bound.
    ("x64split", "f32", 1, 128, 4096, 4096, "kn", ["auto", "x128", "x128/2", "x128/4", "x128/8"]),
    ("x64split", "f32", 1, 128, 4096, 4096, "nk", ["auto", "x128/4"]),
    ("x64split", "f32", 1, 64, 4096, 4096, "kn", ["auto", "x128/4", "x128/8"]),
    ("x64split", "f32", 1, 256, 4096, 4096, "kn", ["auto", "x128/2", "x128/4"]),
    ("x64split", "f32", 1, 128, 14336, 4096, "kn", ["auto", "x128/4", "x128/8"]),
    ("x64split", "f32", 1, 128, 4096, 14336, "kn", ["auto", "x128", "x128/2"]),
    ("x64split", "f32", 1, 512, 512, 512, "kn", ["auto", "x128/2", "x128/4", "x128/8"]),
    ("x64split", "f32", 1, 1024, 1024, 1024, "kn", ["auto", "x128", "x128/2", "x128/3"]),
    ("x64split", "f32", 1, 1000, 1000, 1000, "kn", ["auto", "x128", "x128/2"]),
    ("x64split", "f32", 1, 3000, 1000, 2000, "kn", ["auto", "x128", "x128/2"]),
    ("x64split", "f32", 1, 1024, 4096, 4096, "kn", ["auto", "x128", "x128/2"]),
    # float32 and TF32 decode (2026-11-28): the skinny kernel's register build and its K
    # split, and the streaming build (float32 since 2026-11-28).
    ("f32decode", "f32", 1, 1, 4096, 4096, "kn", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "f32", 1, 1, 4096, 4096, "nk", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "tf32", 1, 1, 4096, 4096, "kn", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "tf32", 1, 16, 4096, 4096, "kn", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny/8", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "f32", 1, 16, 4096, 4096, "kn", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "tf32", 1, 16, 4096, 4096, "nk", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "f32", 1, 1, 4096, 14336, "kn", ["auto", "skinny", "skinny_tma", "skinny/1", "skinny/2"]),
    ("f32decode", "f32", 1, 1, 14336, 4096, "kn", ["auto", "skinny", "skinny/1", "skinny/2", "skinny/4", "skinny_tma", "skinny_tma/2", "skinny_tma/4"]),
    ("f32decode", "f32", 1, 1, 4096, 14336, "nk", ["auto", "skinny", "skinny_tma"]),
    ("f32decode", "tf32", 1, 16, 4096, 14336, "nk", ["auto", "skinny", "skinny_tma"]),
    ("f32decode", "f32", 1, 8, 4096, 4096, "nk", ["auto", "skinny", "skinny_tma"]),
    ("f32decode", "f32", 1, 1, 4096, 128256, "nk", ["auto", "skinny", "skinny_tma"]),
    # 2026-11-29 (--only tf32llm): TF32 on the Llama projections, whose
    # 4096 x 4096 x 14336 row (W^T) sat at 0.91 of cuBLAS in two reports.
    ("tf32llm", "tf32", 1, 4096, 4096, 14336, "nk", ["auto", "wg256", "wg256c1", "wg256c2", "wg192", "wg192c2", "wg128", "wgp128"]),
    ("tf32llm", "tf32", 1, 4096, 14336, 4096, "nk", ["auto", "wg256", "wg256c1", "wg256c2", "wg192", "wg128"]),
    ("tf32llm", "tf32", 1, 4096, 4096, 4096, "nk", ["auto", "wg256", "wg256c1", "wg256c2", "wg192", "wg128"]),
    ("tf32llm", "tf32", 1, 8192, 4096, 14336, "nk", ["auto", "wg256c1", "wg256c2", "wg192"]),
    # Many small products in one bmm (2026-11-28): the report's lowest bmm row.
    ("bmmsmall", "bf16", 256, 128, 64, 128, "kn", ["auto", "wg64", "wg128", "wgp64", "wgp128", "wgh64", "wgh128", "64", "128", "256"]),
    ("bmmsmall", "bf16", 256, 128, 64, 128, "nk", ["auto", "wg64", "wg128", "wgh64", "64", "128"]),
    ("bmmsmall", "bf16", 64, 256, 64, 256, "kn", ["auto", "wg64", "wg128", "wgh64", "64", "128"]),
    ("bmmsmall", "bf16", 512, 64, 64, 64, "kn", ["auto", "wg64", "wgh64", "64", "128"]),
    ("bmmsmall", "bf16", 32, 512, 512, 512, "kn", ["auto", "wg64", "wg128", "wgp128", "wgh128"]),
]


def operands(kind, batch, m, k, n, lay):
    dtype = KINDS[kind][0]
    if lay == "tn":
        a = torch.randn(k, m, device="cuda", dtype=dtype).t()
    else:
        a = torch.randn((m, k) if batch == 1 else (batch, m, k), device="cuda", dtype=dtype)
    if lay == "nk":
        b = torch.randn((n, k) if batch == 1 else (batch, n, k), device="cuda", dtype=dtype).transpose(-1, -2)
    else:
        b = torch.randn((k, n) if batch == 1 else (batch, k, n), device="cuda", dtype=dtype)
    return a, b


def main():
    from triton.testing import do_bench

    p = argparse.ArgumentParser()
    p.add_argument("--out", default=".")
    p.add_argument("--only", default="")
    args = p.parse_args()
    only = [s for s in args.only.split(",") if s]
    rows, bad = [], []
    t0 = time.time()
    for group, kind, batch, m, k, n, lay, variants in CASES:
        if only and group not in only:
            continue
        torch.backends.cuda.matmul.allow_tf32 = KINDS[kind][1]
        torch.manual_seed(m + k + n)
        a, b = operands(kind, batch, m, k, n, lay)
        flop = 2.0 * batch * m * k * n
        gbytes = batch * (m * k + k * n + m * n) * a.element_size() / 1e9
        fn = (lambda: myns.bmm(a, b)) if batch > 1 else (lambda: myns.matmul(a, b))
        t_torch = [do_bench(lambda: torch.matmul(a, b), warmup=10, rep=40, return_mode="median")]
        res = {}
        for v in variants:
            myns.set_override("MYNS_MATMUL_KERNEL", v)
            try:
                fn()
                torch.cuda.synchronize()
                res[v] = do_bench(fn, warmup=10, rep=40, return_mode="median")
                share, _ = bound_share(fn(), a, b, kind)
            except Exception as e:  # a variant the shape cannot take, or a failure: record it
                res[v], share = float("nan"), float("nan")
                print(f"  {v}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            if not share <= 1.0:
                bad.append(f"{group} {kind} {batch}x{m}x{k}x{n} {lay} {v}: err/bound {share}")
            res[v + ":err"] = share
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        t_torch.append(do_bench(lambda: torch.matmul(a, b), warmup=10, rep=40, return_mode="median"))
        tt = statistics.median(t_torch)
        for v in variants:
            t = res[v]
            rows.append({"group": group, "kind": kind, "batch": batch, "m": m, "k": k, "n": n, "lay": lay, "variant": v,
                         "ms": t, "tflops": flop / t / 1e9, "gbs": gbytes / t * 1e3, "ratio": tt / t, "torch_ms": tt,
                         "torch_spread": t_torch, "err": res[v + ":err"]})
            print(f"{group:>9} {kind:>4} {batch}x{m}x{k}x{n} {lay} {v:>9}: {flop / t / 1e9:7.1f} TFLOP/s {gbytes / t * 1e3:7.0f} GB/s "
                  f"ratio {tt / t:5.3f} (torch {flop / tt / 1e9:6.1f}, {t_torch[0]:.4f}/{t_torch[1]:.4f} ms) err/bound {res[v + ':err']:.2f}", flush=True)
        del a, b
    with open(os.path.join(args.out, "matmul-variants.json"), "w") as f:
        json.dump({"rows": rows, "bad": bad, "gpu": torch.cuda.get_device_name(), "seconds": time.time() - t0}, f, indent=1)
    print(f"\n{len(rows)} timings in {time.time() - t0:.0f} s; {len(bad)} out of bound")
    for line in bad:
        print("BAD", line)


if __name__ == "__main__":
    main()
