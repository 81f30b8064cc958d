"""Where one Hopper matmul call's time goes, per block, on short-K products
(the trace probe library built from trace.patch: the kernel stamps
%globaltimer at fixed points into a buffer passed as MYNS_TRACE_PTR).
One call after an L2 flush (as do_bench times it), 7 calls, medians over
blocks and calls. Times in us from the block's own start unless noted.

Slots: 0 start, 1 set-up done (barriers, griddepcontrol.wait), 4 producer
after setmaxnreg.dec, 2 first TMA issued, 3 producer done, 62 consumer 0
after setmaxnreg.inc; consumer 0's leader per tile j < 11: 8+3j tile start,
9+3j first stage arrived, 10+3j main loop done; 60 all tiles done, 61 the
output's TMA stores have read shared memory; tiles j < 2, 40+8j..47+8j: the
TMA-store epilogue's first round (before and after the leader's wait for
the last stores' reads, after the first barrier, after the stmatrix, after
the fence and second barrier, after the TMA stores issue) and the first
k-tile's wgmma issued and its wait<1>.

Device run from the repository root, with the probe library built from
trace.patch in .gpu/trace.so:
    PYTHONPATH=python_loader MYNS_LIBRARY=.gpu/trace.so python bench/explore/bmm-small/trace.py
"""
import os
import statistics as st
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from matmul_variants import operands  # noqa: E402

SHAPES = [  # kind, batch, m, k, n, b layout (the per-tile slots cover tiles 0 and 1 only)
    ("bf16", 256, 128, 64, 128, "kn"),
    ("bf16", 256, 128, 64, 128, "nk"),
    ("bf16", 64, 256, 64, 256, "kn"),
    ("bf16", 32, 512, 512, 512, "kn"),
    ("bf16", 1, 512, 512, 512, "kn"),
    ("bf16", 1, 1024, 1024, 1024, "kn"),
    ("bf16", 1, 1000, 1000, 1000, "kn"),
]
buf = torch.zeros(1024 * 128, dtype=torch.int64, device="cuda")
os.environ["MYNS_TRACE_PTR"] = str(buf.data_ptr())
flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")


def med(xs):
    xs = [x for x in xs if x == x]
    return st.median(xs) if xs else float("nan")


def us(a, b):
    return (b - a) / 1e3 if a > 0 and b > 0 else float("nan")


for kind, batch, m, k, n, lay in SHAPES:
    torch.manual_seed(0)
    a, b = operands(kind, batch, m, k, n, lay)
    mm = myns.bmm if batch > 1 else myns.matmul
    for _ in range(3):
        mm(a, b)
    S = {}

    def add(key, v):
        S.setdefault(key, []).append(v)

    for rep in range(7):
        flush.zero_()
        buf.zero_()
        torch.cuda.synchronize()
        mm(a, b)
        torch.cuda.synchronize()
        t = buf.view(1024, 128).cpu()
        g = t[:, :64]
        ran = [i for i in range(1024) if g[i, 0] > 0]
        t0 = min(int(g[i, 0]) for i in ran)
        add("span", us(t0, max(int(g[i, 61]) for i in ran)))
        add("blocks", len(ran))
        add("start_skew", us(t0, max(int(g[i, 0]) for i in ran)))
        add("end_first", us(t0, min(int(g[i, 61]) for i in ran)))
        for i in ran:
            gi = [int(x) for x in g[i]]
            add("start", us(t0, gi[0]))
            for sl, name in ((1, "setup"), (4, "setmaxnreg.dec"), (2, "first TMA"), (3, "producer done"), (62, "setmaxnreg.inc"),
                             (9, "tile0 data"), (10, "tile0 loop end"), (11, "tile1 start"), (12, "tile1 data"), (13, "tile1 loop end"),
                             (14, "tile2 start"), (60, "tiles done"), (61, "stores read")):
                add(name, us(gi[0], gi[sl]))
            add("tiles", sum(1 for j in range(2) if gi[8 + 3 * j] > 0))
            for j in range(2):
                e = 40 + 8 * j
                for name, x, y in (("wgmma issue", 9 + 3 * j, e + 6), ("wgmma wait<1>", e + 6, e + 7), ("loop end -> epilogue", 10 + 3 * j, e),
                                   ("wait_read", e, e + 1), ("bar 1", e + 1, e + 2), ("stmatrix", e + 2, e + 3), ("fence + bar 2", e + 3, e + 4),
                                   ("TMA store issue", e + 4, e + 5), ("epilogue -> next tile / done", e + 5, 8 + 3 * (j + 1) if j == 0 else 60)):
                    add(f"t{j} {name}", us(gi[x], gi[y]))
    flop = 2.0 * batch * m * n * k
    span = med(S["span"])
    print(f"{kind} {batch}x{m}x{k}x{n} {lay}: blocks {med(S['blocks'])}, span {span:.2f} us ({flop / span / 1e6:.0f} TFLOP/s), "
          f"last block starts at {med(S['start_skew']):.2f}, first block ends at {med(S['end_first']):.2f}, tiles per block {med(S['tiles'])}")
    keys = ["start", "setup", "setmaxnreg.dec", "first TMA", "setmaxnreg.inc", "tile0 data", "tile0 loop end", "tile1 start", "tile1 data",
            "tile1 loop end", "tile2 start", "producer done", "tiles done", "stores read"]
    print("   " + ", ".join(f"{x} {med(S[x]):.2f}" for x in keys))
    for j in range(2):
        ks = [x for x in S if x.startswith(f"t{j} ")]
        print(f"   tile {j}: " + ", ".join(f"{x[3:]} {med(S[x]):.2f}" for x in ks))
    del a, b
