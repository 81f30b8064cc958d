"""Where one Hopper matmul call's time goes, per block (trace probe library:
kernels stamp %globaltimer and clock64 at fixed points into a buffer passed
as MYNS_TRACE_PTR; see trace.patch). One call after an L2 flush, as
do_bench times it; several calls, the medians over blocks.

Slots per block: 0 start, 1 after set-up (barriers, griddepcontrol.wait),
2 producer's first TMA issued, 3 producer done, 4 after its setmaxnreg,
5 first item computed, 6 first expect_tx, 7 first A load issued (K-major A),
62 consumer 0 after setmaxnreg; consumer 0's leader per tile
j < 16: 8+3j tile start, 9+3j first stage arrived, 10+3j main loop done;
60 all tiles done, 61 output stores have read shared memory.
"""
import os
import statistics as st
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from matmul_variants import operands  # noqa: E402

SHAPES = [
    ("bf16", 1, 512, 512, 512, "kn"),
    ("bf16", 1, 1024, 1024, 1024, "kn"),
    ("bf16", 1, 1000, 1000, 1000, "kn"),
    ("bf16", 1, 3000, 1000, 2000, "kn"),
    ("bf16", 1, 1024, 4096, 1024, "kn"),
    ("bf16", 1, 3000, 4000, 2000, "kn"),
    ("bf16", 1, 4096, 4096, 4096, "kn"),
]
buf = torch.zeros(132 * 128, dtype=torch.int64, device="cuda")
os.environ["MYNS_TRACE_PTR"] = str(buf.data_ptr())
flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")


def med(xs):
    return st.median(xs) if xs else float("nan")


for kind, batch, m, k, n, lay in SHAPES:
    torch.manual_seed(0)
    a, b = operands(kind, batch, m, k, n, lay)
    for _ in range(3):
        myns.matmul(a, b)
    rows = []
    for rep in range(7):
        flush.zero_()
        buf.zero_()
        torch.cuda.synchronize()
        myns.matmul(a, b)
        torch.cuda.synchronize()
        t = buf.view(132, 128).cpu()
        rows.append(t)
    # per call: blocks that ran (slot 0 set)
    stats = {k: [] for k in ["span", "setup", "first_issue", "first_data", "tiles", "loop0", "loop1", "epi0", "tail", "end_skew", "start_skew", "loop_cyc0"]}
    for t in rows:
        g, c = t[:, :64], t[:, 64:]
        ran = [i for i in range(132) if g[i, 0] > 0]
        t0 = min(int(g[i, 0]) for i in ran)
        tend = max(int(g[i, 61]) for i in ran)
        stats["span"].append((tend - t0) / 1e3)
        stats["start_skew"].append((max(int(g[i, 0]) for i in ran) - t0) / 1e3)
        stats["end_skew"].append((tend - min(int(g[i, 61]) for i in ran)) / 1e3)
        for i in ran:
            gi = [int(x) for x in g[i]]
            stats["setup"].append((gi[1] - gi[0]) / 1e3)
            stats["first_issue"].append((gi[2] - gi[0]) / 1e3)
            for sl in (4, 5, 6, 7, 62):
                stats.setdefault(f"s{sl}", []).append((gi[sl] - gi[1]) / 1e3 if gi[sl] else float("nan"))
            stats["first_data"].append((gi[9] - gi[0]) / 1e3)
            nt = sum(1 for j in range(16) if gi[8 + 3 * j] > 0)
            stats["tiles"].append(nt)
            stats["loop0"].append((gi[10] - gi[9]) / 1e3)
            stats["loop_cyc0"].append((int(c[i, 10]) - int(c[i, 9])))
            if nt > 1:
                stats["epi0"].append((gi[11] - gi[10]) / 1e3)
                stats["loop1"].append((gi[13] - gi[11]) / 1e3)
            last = 8 + 3 * (nt - 1)
            stats["tail"].append((gi[61] - gi[last + 2]) / 1e3)
    flop = 2.0 * batch * m * n * k
    span = med(stats["span"])
    print(f"{kind} {batch}x{m}x{k}x{n} {lay}: span {span:.2f} us ({flop / span / 1e6:.0f} TFLOP/s), blocks start within {med(stats['start_skew']):.2f}, end within {med(stats['end_skew']):.2f}")
    print(f"   per block (medians, us): setup {med(stats['setup']):.2f}, first TMA issued {med(stats['first_issue']):.2f}, first stage in {med(stats['first_data']):.2f}, "
          f"tiles {med(stats['tiles'])}, main loop 1 {med(stats['loop0']):.2f} ({med(stats['loop_cyc0']):.0f} cycles), epilogue 1 -> loop 2 start {med(stats['epi0']):.2f}, "
          f"tile 2 (start to loop end) {med(stats['loop1']):.2f}, last epilogue + store {med(stats['tail']):.2f}")
    print("   after set-up (us): " + ", ".join(f"{n} {med(stats[f's{sl}']):.2f}" for sl, n in ((4, "setmaxnreg.dec"), (5, "item"), (6, "expect_tx"), (7, "A load issued"), (62, "consumer setmaxnreg.inc"))) + f", first TMA issued {med(stats['first_issue']) - med(stats['setup']):.2f}")
    del a, b
