"""Exploration (2026-11-29): does splitting K over a cluster help the
streaming skinny build where the strips leave SMs idle (N = 4096: 64
strips, 64 blocks on 132 SMs), once the L2 is clean?  The earlier split
sweep (`../matmul-variants-h200-skinny-split.log`) timed do_bench only,
whose zero-fill flush leaves the L2 dirty and caps every kernel near the
write-back rate.

Each (shape, variant) is timed both ways in each round, variants and
cuBLAS rotated between rounds: `clean` = median of 60 calls each after a
256 MB read (bench_matmul.clean_l2_ms), `zero` = do_bench median. Prints
GB/s of x + weights + out, medians over rounds, and the error against
float64 over its elementwise bound.  Also prints cuBLAS's kernels (name,
grid, block) for each shape from a profiler trace.

    python bench/explore/decode-split/split.py [--rounds 3] [--set first|confirm|few|auto|prom|ring16|kv|tf32|midm|rows32|rows64|tiles64|wghfix|wghc2|ragged|n14336|wave1|wave2|redux|pair|pair2|longk|shortk|rows32k|longk2|rows32s|wide|wave144]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
import myns  # noqa: E402
from bench_matmul import KINDS, bound_share, clean_l2_ms  # noqa: E402

S64 = ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]
SPLIT = ["auto", "skinny_tma8/2", "skinny_tma16/2"]
SETS = {}
SETS["first"] = [
    ("bf16", 1, 14336, 4096, "kn", S64),
    ("bf16", 16, 14336, 4096, "kn", S64),
    ("bf16", 1, 14336, 4096, "nk", S64),
    ("bf16", 16, 14336, 4096, "nk", S64),
    ("bf16", 1, 4096, 4096, "kn", S64),
    ("bf16", 16, 4096, 4096, "kn", S64),
    ("bf16", 1, 8192, 4096, "nk", S64),
    ("tf32", 1, 4096, 4096, "kn", ["auto", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4", "skinny_tma16"]),
    ("tf32", 1, 14336, 4096, "kn", ["auto", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma8/4", "skinny_tma4/4"]),
    ("bf16", 16, 4096, 14336, "kn", ["auto", "skinny_tma8", "skinny_tma4/2", "skinny_tma8/2"]),
    ("bf16", 1, 4096, 14336, "kn", ["auto", "skinny_tma8", "skinny_tma4/2", "skinny_tma8/2"]),
]
# Where does the split start to pay (K per block), and does it at 56 and 80 strips?
SETS["confirm"] = [
    (kind, m, k, n, lay, SPLIT)
    for kind, m, k, n, lay in [
        ("bf16", 1, 8192, 4096, "kn"), ("bf16", 16, 8192, 4096, "nk"),
        ("bf16", 1, 11008, 4096, "nk"), ("bf16", 16, 11008, 4096, "kn"),
        ("bf16", 1, 12288, 4096, "kn"), ("bf16", 16, 12288, 4096, "nk"),
        ("bf16", 8, 14336, 4096, "nk"), ("f16", 1, 14336, 4096, "kn"),
        ("bf16", 1, 18944, 3584, "nk"), ("bf16", 16, 18944, 3584, "kn"),
        ("bf16", 1, 13824, 5120, "nk"), ("bf16", 1, 28672, 8192, "nk"),
        ("tf32", 16, 4096, 4096, "kn"), ("tf32", 16, 14336, 4096, "kn"),
        ("f32", 1, 4096, 4096, "kn"), ("f32", 8, 4096, 4096, "nk"),
    ]
]
# Fewer than 64 strips (N < 4096), where the register build runs today
# (its own cluster split), against the streaming build split 1, 2 or 4 ways.
FEW = ["auto", "skinny_tma16", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma16/4", "skinny_tma4/4"]
SETS["few"] = [
    (kind, m, k, n, lay, FEW + (["skinny_tma16/8"] if n <= 1024 else []))
    for kind, m, k, n, lay in [
        ("bf16", 1, 2048, 2048, "kn"), ("bf16", 1, 4096, 2048, "nk"), ("bf16", 1, 8192, 2048, "nk"),
        ("bf16", 16, 8192, 2048, "kn"), ("bf16", 1, 16384, 2048, "kn"),
        ("bf16", 1, 3584, 3584, "nk"), ("bf16", 16, 3584, 3584, "kn"), ("bf16", 1, 8192, 3584, "nk"),
        ("bf16", 1, 4096, 1024, "nk"), ("bf16", 16, 14336, 1024, "kn"),
        ("bf16", 1, 6144, 4096, "kn"), ("bf16", 1, 10240, 4096, "nk"),
        ("f32", 1, 8192, 2048, "kn"),
    ]
]

# The library's automatic choice after a0009f3, on every shape above.
SETS["auto"] = [(kind, m, k, n, lay, ["auto"]) for name in ("first", "confirm", "few") for kind, m, k, n, lay, _ in SETS[name]]

# Libraries built with other L2 promotions on the weights' tensor map (run
# as separate processes, one round each, rotated: prom.sh).
SETS["prom"] = [
    (kind, m, k, n, lay, ["auto"])
    for kind, m, k, n, lay in [
        ("bf16", 1, 4096, 14336, "kn"), ("bf16", 16, 4096, 14336, "kn"), ("bf16", 1, 4096, 14336, "nk"),
        ("bf16", 1, 14336, 4096, "kn"), ("bf16", 16, 14336, 4096, "nk"), ("bf16", 1, 4096, 4096, "kn"),
        ("bf16", 16, 4096, 4096, "kn"), ("bf16", 1, 8192, 2048, "nk"), ("bf16", 1, 4096, 32000, "nk"),
        ("bf16", 1, 4096, 128256, "nk"), ("f32", 1, 4096, 4096, "kn"),
    ]
]

# The ring at 192-256 strips after the 128-byte promotion (8d46929).
SETS["ring16"] = [
    (kind, m, k, n, lay, ["auto", "skinny_tma8", "skinny_tma4"])
    for kind, m, k, n, lay in [
        ("bf16", 16, 4096, 14336, "kn"), ("bf16", 16, 4096, 14336, "nk"), ("bf16", 8, 4096, 14336, "nk"),
        ("bf16", 1, 4096, 14336, "kn"), ("bf16", 16, 4096, 12288, "nk"), ("bf16", 16, 4096, 16384, "nk"),
        ("bf16", 16, 3584, 18944, "nk"),
    ]
]

# Fewer than 16 strips (N < 1024: grouped-query k/v projections), on the
# register build today, against the streaming build split 4 or 8 ways.
SETS["kv"] = [
    (kind, m, k, n, lay, ["auto", "skinny_tma16/8", "skinny_tma8/8", "skinny_tma16/4", "skinny/4"])
    for kind, m, k, n, lay in [
        ("bf16", 1, 4096, 512, "nk"), ("bf16", 16, 4096, 512, "nk"), ("bf16", 1, 3584, 512, "nk"),
        ("bf16", 1, 2048, 512, "nk"), ("bf16", 1, 5120, 640, "nk"), ("bf16", 1, 8192, 768, "nk"),
        ("bf16", 1, 4096, 256, "nk"),
    ]
]

# TF32 on mma consumers in the streaming build (was FFMA): the library's
# plan against forced rings and splits; run with the library before and
# after (LIB) for the change itself.
SETS["tf32"] = [
    ("tf32", m, k, n, lay, ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma16/2", "skinny_tma8/2", "skinny_tma4"])
    for m, k, n, lay in [
        (1, 4096, 4096, "kn"), (4, 4096, 4096, "kn"), (8, 4096, 4096, "nk"), (16, 4096, 4096, "kn"),
        (16, 4096, 4096, "nk"), (16, 14336, 4096, "nk"), (16, 4096, 14336, "nk"), (16, 8192, 2048, "nk"),
        (16, 4096, 1024, "kn"),
    ]
]

# Between decode and the 128-row tiles: 24 to 96 rows (batched decode).
SETS["midm"] = [
    (kind, m, k, n, "nk", ["auto"])
    for kind in ("bf16", "tf32")
    for m in (24, 32, 48, 64, 96)
    for k, n in ((4096, 4096), (4096, 14336), (14336, 4096))
]

# 17-32 rows on the streaming build's 4 m blocks: rings and splits against the plan (not run yet: the 2026-11-29 session's device time ran out).
SETS["rows32"] = [
    (kind, m, k, n, "nk", ["auto", "skinny_tma16", "skinny_tma8", "skinny_tma4", "skinny_tma4/2", "skinny_tma16/2"])
    for kind, m, k, n in [("tf32", 32, 4096, 14336), ("tf32", 24, 4096, 14336), ("bf16", 32, 4096, 14336), ("tf32", 32, 4096, 4096)]
]


# 33-64 rows on the streaming build's 8 m blocks (forced) against the tile
# kernels the plan takes there (`auto` before the plan sends them over).
SETS["rows64"] = [
    (kind, m, k, n, "nk", ["auto", "skinny_tma", "skinny_tma/2", "skinny_tma4", "skinny_tma4/2"])
    for kind in ("bf16", "tf32")
    for m in (40, 48, 64)
    for k, n in ((4096, 4096), (4096, 14336), (14336, 4096))
]


# bf16 at 48-96 rows on the tile kernels (64 strips and fewer, where the
# streaming build lost): the plan against 64-row tiles split 2 to 4 ways.
SETS["tiles64"] = [
    ("bf16", m, k, n, "nk", ["auto", "wgh64/2", "wgh64/3", "wgh64/4", "wgh128/2", "wgh128/4", "wg64k2", "wg64k4"])
    for m in (48, 64, 96)
    for k, n in ((4096, 4096), (4096, 14336), (14336, 4096))
]


# Where halving the 64-row tiles' cost per K range (plan.rs `wg_cost`) moved
# the plan, bf16: `auto` (the new plan) against the old one, forced. Where M
# fills the 128-row tiles at K < 8192 the plan keeps the K cluster; there
# `auto` is timed against the 64-row tiles the halved cost alone would pick.
SETS["wghfix"] = [
    ("bf16", m, k, n, "nk", ["auto", old])
    for m, k, n, old in [
        (48, 4096, 4096, "wgh64"), (64, 4096, 4096, "wgh64"), (80, 4096, 4096, "wgh64"), (96, 4096, 4096, "wgh64"),
        (80, 14336, 4096, "wg64/2"), (96, 14336, 4096, "wg64/2"), (80, 8192, 4096, "wg64/2"),
        (112, 4096, 1024, "wgh64/2"), (128, 4096, 1024, "wgh64/2"), (256, 4096, 1024, "wgh64/2"),
        (128, 8192, 2048, "wg64k2"), (128, 32000, 2048, "wg64/3"), (192, 16384, 1024, "wg64/4"),
        (160, 4096, 2048, "wg64/2"), (192, 4096, 2048, "wg64/2"), (96, 32000, 2048, "wg64/3"), (80, 8192, 2048, "wg64/3"),
    ]
]


# The plan's 64-row tiles at 80 rows and more have two rows of tiles and
# more: pairs of them in a cluster (`c2`) share the weights' loads
# (multicast), against the plan (aeea664) without.
SETS["wghc2"] = [
    ("bf16", m, k, n, "nk", ["auto", *pairs])
    for m, k, n, pairs in [
        (80, 4096, 4096, ["wgh128c2/2", "wgh64c2/2"]), (96, 4096, 4096, ["wgh128c2/2", "wgh64c2/2"]),
        (80, 14336, 4096, ["wgh128c2/2"]), (96, 14336, 4096, ["wgh128c2/2", "wgh128c2/4"]), (80, 8192, 4096, ["wgh128c2/2"]),
        (96, 4096, 14336, ["wgh128c2", "wgh128c2/2"]), (96, 32000, 2048, ["wgh128c2/4"]), (128, 8192, 2048, ["wgh128c2/4"]),
        (160, 4096, 2048, ["wgh128c2/2"]), (192, 16384, 1024, ["wgh128c2/5"]),
        (128, 4096, 1024, ["wgh64c2/2"]), (256, 4096, 1024, ["wgh64c2/2"]),
    ]
]


# The report's ragged and small squares (kn, as bench_matmul.py lays them
# out): the plan against every Hopper tile, paired or in K clusters.
RAGGED = ["auto", "wg256", "wg192", "wg128", "wg64", "wgp128", "wgp64", "wgh128", "wgh64", "wg192c1", "wg256c1", "wg128c2", "wg64k2", "wg128k2"]
SETS["ragged"] = [
    (kind, m, k, n, "kn", RAGGED)
    for kind, m, k, n in [("bf16", 1000, 1000, 1000), ("bf16", 1024, 1024, 1024), ("f16", 1024, 1024, 1024), ("bf16", 512, 512, 512), ("bf16", 3000, 1000, 2000)]
]


# 33-64 rows against 4096 x 14336 (224 strips: the streaming build's 8 m
# blocks run 1.7 waves of one block per SM): the plan against one wave of
# 64 x 128 tiles over all of K (112 blocks, as cuBLAS's 128 x 48 tiles).
SETS["n14336"] = [
    ("bf16", m, 4096, 14336, "nk", ["auto", "wgh128", "wgh128/2", "wg128", "skinny_tma/2"])
    for m in (40, 48, 64)
]


# Where else one wave of 64 x 128 tiles over all of K could beat the plan
# (aeea664): 16-bit, 17-128 rows, 64 to 148 columns of such tiles.
SETS["wave1"] = [
    ("bf16", m, k, n, "nk", ["auto", "wgh128"])
    for m, k, n in [(mm, 4096, nn) for mm in (24, 32, 48, 64) for nn in (8192, 11008, 14336, 16384)]
    + [(64, 3584, 18944), (96, 4096, 8192), (128, 4096, 8192)]
]


# After the plan took one wave of 64 x 128 tiles there (plan.rs `wgh_wave`):
# the plan against the streaming build and 128-row tiles, both layouts, f16,
# and long K.
SETS["wave2"] = [
    (kind, m, k, n, lay, ["auto", "skinny_tma", "wg128"])
    for kind, m, k, n, lay in [
        ("bf16", 40, 4096, 14336, "nk"), ("bf16", 48, 4096, 8192, "nk"), ("bf16", 64, 4096, 11008, "nk"), ("bf16", 64, 3584, 18944, "nk"),
        ("bf16", 96, 4096, 8192, "nk"), ("bf16", 128, 4096, 8192, "nk"), ("bf16", 48, 14336, 8192, "nk"), ("f16", 48, 4096, 14336, "nk"),
        ("bf16", 48, 4096, 14336, "kn"), ("bf16", 64, 4096, 8192, "kn"), ("bf16", 96, 4096, 8192, "kn"),
    ]
]


# What the split's reduction through L2 costs the 64-row tiles: at 64 x 4096
# x 4096, 64 x 64 tiles in two K ranges run 128 blocks of K = 2048 each, as
# 64 x 2048 x 8192 unsplit does, which needs no reduction; and the same K
# ranges summed in a cluster's shared memory instead (`k2`, `k4`).
SETS["redux"] = [
    ("bf16", m, k, n, "nk", variants)
    for m in (48, 64, 96)
    for k, n, variants in (
        (4096, 4096, ["auto", "wgh64/2", "wgh64k2", "wgh128/4", "wgh128k4"]),
        (2048, 8192, ["auto", "wgh64", "wgh128/2", "wgh128k2"]),
    )
] + [
    ("bf16", m, k, n, "nk", ["auto", "wgh128k2", "wgh64k2", "wgh128k4"])
    for m, k, n in ((64, 14336, 4096), (96, 14336, 4096), (128, 8192, 2048), (64, 4096, 2048), (128, 4096, 1024), (64, 3584, 18944))
]


# After the plan took a cluster's two K ranges of 64-row tiles at up to 64
# rows (plan.rs `wgh_k_cluster`): the plan against the split it replaced
# (`wgh64/2`), both layouts, f16, K and N it was not fitted to; where the
# plan splits three or more ways, against a cluster's four ranges; TF32's
# register-A tiles in a cluster against its plan.
SETS["pair"] = [
    (kind, m, k, n, lay, variants)
    for kind, m, k, n, lay, variants in [
        ("bf16", 33, 4096, 4096, "nk", ["auto", "wgh64/2"]), ("bf16", 56, 4096, 4096, "nk", ["auto", "wgh64/2"]),
        ("bf16", 64, 4096, 4096, "kn", ["auto", "wgh64/2"]), ("bf16", 48, 4096, 4096, "kn", ["auto", "wgh64/2"]),
        ("f16", 64, 4096, 4096, "nk", ["auto", "wgh64/2"]), ("bf16", 64, 8192, 4096, "nk", ["auto", "wgh64/2"]),
        ("bf16", 48, 14336, 4096, "nk", ["auto", "wgh64/2"]), ("bf16", 64, 4096, 1024, "nk", ["auto", "wgh64/2", "wgh64k4"]),
        ("bf16", 48, 4096, 2048, "nk", ["auto", "wgh64/2", "wgh64k4"]), ("bf16", 64, 4096, 2048, "kn", ["auto", "wgh64/2", "wgh64k4"]),
        ("bf16", 64, 8192, 2048, "nk", ["auto", "wgh64k2", "wgh64k4"]), ("bf16", 64, 32000, 2048, "nk", ["auto", "wgh64k2", "wgh64k4"]),
        ("bf16", 64, 16384, 1024, "nk", ["auto", "wgh64k2", "wgh64k4"]),
        ("tf32", 64, 4096, 4096, "nk", ["auto", "wgrh64k2", "wgrh64k4"]), ("tf32", 48, 14336, 4096, "nk", ["auto", "wgrh64k2"]),
    ]
]


# Four K ranges in a cluster on 16 tiles or fewer (plan.rs `wgh_k_cluster`,
# d9c107c) where the set `pair` did not reach: 4 to 12 tiles of 64 x 64
# (fewer blocks than the split through L2 it replaced: 16 to 48 against 8
# to 72), against that split (`wgh64/s`: the plan before) and two ranges.
SETS["pair2"] = [
    ("bf16", m, k, n, lay, variants)
    for m, k, n, lay, variants in [
        (64, 4096, 256, "nk", ["auto", "wgh64/2", "wgh64k2"]), (64, 14336, 256, "nk", ["auto", "wgh64/6", "wgh64k2"]),
        (64, 4096, 512, "nk", ["auto", "wgh64/2", "wgh64k2"]), (64, 14336, 512, "nk", ["auto", "wgh64/6", "wgh64k2"]),
        (64, 4096, 768, "nk", ["auto", "wgh64/2", "wgh64k2"]), (48, 14336, 768, "nk", ["auto", "wgh64/6", "wgh64k2"]),
        (48, 14336, 1024, "nk", ["auto", "wgh64/5", "wgh64k2"]), (64, 4096, 1024, "kn", ["auto", "wgh64/2", "wgh64k2"]),
        (64, 16384, 1024, "nk", ["auto", "wgh64/5"]), (64, 14336, 1536, "nk", ["auto", "wgh64k2", "wgh64k4"]),
    ]
]


# Long K against few columns at 48-64 rows (4 to 16 strips of 64), where
# the plan splits K over 64-row tiles five to seven ways through L2 (24 to
# 112 blocks, 0.46-0.75 of cuBLAS with a clean L2 in `pair2`): the
# streaming build split over clusters of 4 or 8 blocks, and more ranges.
SETS["longk"] = [
    ("bf16", m, k, n, "nk", ["auto", "skinny_tma", "skinny_tma/4", "skinny_tma/8", "wgh64/12", "wgh64k4"])
    for m, k, n in [(64, 14336, 256), (64, 14336, 512), (48, 14336, 768), (48, 14336, 1024), (64, 16384, 1024), (64, 8192, 1024)]
]


# Short K (2048-3072) at 33-64 rows against 1024-4096 columns, where the
# plan leaves 64-row tiles unsplit (its model splits only from K = 4096):
# the plan against two and four K ranges in a cluster.
SETS["shortk"] = [
    ("bf16", m, k, n, lay, ["auto", "wgh64k2", "wgh64k4"])
    for m, k, n, lay in [
        (64, 2048, 4096, "nk"), (48, 2048, 4096, "nk"), (64, 2048, 2048, "nk"), (64, 3072, 3072, "nk"),
        (40, 2048, 2048, "nk"), (64, 2048, 1024, "nk"), (64, 2048, 4096, "kn"), (64, 3072, 4096, "nk"),
    ]
]


# The K clusters of 64-row tiles (plan.rs `wgh_k_cluster`, 460db20) below
# 33 rows, on fewer than 16 strips (where the streaming build does not run)
# and at K = 8192, where nothing measured them: the plan (four ranges in a
# cluster) against the plan before (`wgh64`, `/2`, `/4` through L2).
SETS["rows32k"] = [
    ("bf16", m, k, n, "nk", ["auto", old])
    for m, k, n, old in [
        (24, 4096, 512, "wgh64/2"), (32, 4096, 512, "wgh64/2"), (17, 4096, 256, "wgh64/2"),
        (24, 2048, 512, "wgh64"), (32, 2048, 960, "wgh64"), (24, 8192, 768, "wgh64/4"), (64, 8192, 768, "wgh64/4"),
    ]
]

# Long K against 4-12 strips (2026-11-30): where set `longk` saw the
# streaming build in clusters of 8 win at K = 14336, shorter K and fewer
# rows (24-64), against the plan.
SETS["longk2"] = [
    ("bf16", m, k, n, "nk", ["auto", "skinny_tma/8", "skinny_tma/4"])
    for m, k, n in [(64, 4096, 512), (64, 8192, 256), (64, 8192, 512), (64, 8192, 768), (40, 8192, 256), (40, 8192, 512),
                    (40, 14336, 512), (40, 14336, 768), (24, 8192, 512), (24, 14336, 512), (64, 14336, 256), (64, 32768, 512),
                    (64, 14336, 896), (64, 14336, 512)]
] + [("bf16", 64, 14336, 512, "kn", ["auto", "skinny_tma/8"]), ("f16", 48, 14336, 512, "nk", ["auto", "skinny_tma/8"]), ("tf32", 64, 14336, 512, "nk", ["auto", "skinny_tma/8"])]

# 17-32 rows at K = 2048-4096 against 4-14 strips (2026-11-30), where set
# `rows32k` had the plan's tiles at 0.56-0.65 of cuBLAS: the streaming
# build in clusters of 2, 4 and 8; and 64 rows at K = 4096 and 6144.
SETS["rows32s"] = [
    ("bf16", m, k, n, "nk", ["auto", "skinny_tma/8", "skinny_tma/4", "skinny_tma/2"])
    for m, k, n in [(24, 4096, 512), (32, 4096, 512), (17, 4096, 256), (24, 2048, 512), (32, 2048, 960), (32, 4096, 896),
                    (24, 6144, 512), (64, 6144, 512), (48, 4096, 256)]
]

# 33-64 rows against 11008-18944 columns (2026-11-30), where one wave of 64
# x 128 tiles (`wgh_wave`) leaves 1.1 waves (148 tiles at N = 18944: 0.75
# of cuBLAS in the report's neighbourhood): 64-wide tiles, split K, the
# streaming build.
SETS["wide"] = [
    ("bf16", m, k, n, "nk", ["auto", "wgh64", "wgh128/2", "wgh64k2", "skinny_tma", "skinny_tma/2"])
    for m, k, n in [(64, 3584, 18944), (48, 3584, 18944), (64, 4096, 11008), (64, 4096, 14336), (40, 2048, 16384)]
]

# One wave of 64 x 144 tiles (2026-11-30, `plan::wgh_wave`): the plan
# against 64 x 128 tiles (1.1 waves) and 64 x 64, where 128-wide tiles make
# a few more than 132.
SETS["wave144"] = [
    (kind, m, k, n, "nk", ["auto", "wgh128", "wgh64"])
    for kind, m, k, n in [("bf16", 64, 3584, 18944), ("bf16", 48, 3584, 18944), ("bf16", 40, 3584, 18944), ("bf16", 64, 2048, 17000),
                          ("bf16", 64, 4096, 18432), ("f16", 64, 3584, 18944)]
] + [("bf16", 64, 3584, 18944, "kn", ["auto", "wgh128"])]


def operands(kind, m, k, n, lay):
    dtype = KINDS[kind][0]
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(n, k, device="cuda", dtype=dtype).t() if lay == "nk" else torch.randn(k, n, device="cuda", dtype=dtype)
    return a, b


def cublas_kernels(a, b):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
    path = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    os.unlink(path)
    seen = []
    for e in ev:
        if e.get("cat") == "kernel":
            s = f"{e['name'][:90]} grid {e['args'].get('grid')} block {e['args'].get('block')} smem {e['args'].get('shared memory')} {e.get('dur')} us"
            if s.split(" us")[0] not in [x.split(" us")[0] for x in seen]:
                seen.append(s)
    return seen


def main():
    from triton.testing import do_bench

    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="")
    p.add_argument("--set", default="first", choices=sorted(SETS))
    args = p.parse_args()
    rows = []
    for kind, m, k, n, lay, variants in SETS[args.set]:
        torch.backends.cuda.matmul.allow_tf32 = KINDS[kind][1]
        torch.manual_seed(m + k + n)
        a, b = operands(kind, m, k, n, lay)
        gbytes = (m * k + k * n + m * n) * a.element_size() / 1e9
        names = ["torch"] + variants
        t = {v: {"clean": [], "zero": []} for v in names}
        err = {}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[: r % len(names)]
            for v in order:
                if v == "torch":
                    fn = lambda: torch.matmul(a, b)  # noqa: E731
                    myns.set_override("MYNS_MATMUL_KERNEL", None)
                else:
                    myns.set_override("MYNS_MATMUL_KERNEL", v)
                    fn = lambda: myns.matmul(a, b)  # noqa: E731
                try:
                    out = fn()
                    torch.cuda.synchronize()
                    if v != "torch" and v not in err:
                        err[v] = bound_share(out, a, b, kind)[0]
                    t[v]["clean"].append(clean_l2_ms(fn))
                    t[v]["zero"].append(do_bench(fn, warmup=10, rep=40, return_mode="median"))
                except Exception as e:
                    print(f"  {v}: {type(e).__name__}: {str(e)[:160]}", flush=True)
                    t[v]["clean"].append(float("nan"))
                    t[v]["zero"].append(float("nan"))
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        med = {v: {f: statistics.median(t[v][f]) for f in ("clean", "zero")} for v in names}
        print(f"\n{kind} {m}x{k}x{n} {lay}  (GB/s clean / zero; ratio = cuBLAS time / ours)")
        for v in names:
            c, z = med[v]["clean"], med[v]["zero"]
            rc, rz = med["torch"]["clean"] / c, med["torch"]["zero"] / z
            spread = " ".join(f"{gbytes / x * 1e3:.0f}" for x in t[v]["clean"])
            print(f"  {v:>15}: {gbytes / c * 1e3:6.0f} / {gbytes / z * 1e3:6.0f}  ratio {rc:5.3f} / {rz:5.3f}  err/bound {err.get(v, float('nan')):.2f}  clean rounds {spread}", flush=True)
            rows.append({"kind": kind, "m": m, "k": k, "n": n, "lay": lay, "variant": v, "clean_ms": t[v]["clean"], "zero_ms": t[v]["zero"], "err": err.get(v)})
        for line in cublas_kernels(a, b):
            print("  cuBLAS:", line)
        del a, b
    if args.out:
        with open(os.path.join(args.out, "split.json"), "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
