"""Where a pair of blocks (a cluster of 2 sharing one operand's tile) loses
time against single blocks on the same tile (trace probe library built
with `trace.patch`: kernels stamp %globaltimer at fixed points into a
buffer passed as MYNS_TRACE_PTR). One call after an L2 flush; 7 calls,
medians over blocks and calls.

Slots per block: 0 start, 1 after the cluster barrier (single blocks:
__syncthreads), 2 after griddepcontrol.wait, 3 A loader's first TMA
issued, 4 A loader done, 5 consumer 0 after setmaxnreg, 6 + kt consumer
0's full barrier passed for k-tile kt (first item, kt < 48), 54 its main
loop done, 55 its second item's start, 56 B loader's first TMA, 57 / 58
B / A loader past its first wait on an empty barrier (round 1), 60
consumer 0 before the last store wait, 61 after the final cluster barrier.

    python bench/explore/pair-cost/trace.py
"""
import os
import statistics as st
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import myns  # noqa: E402
from matmul_variants import operands  # noqa: E402

CASES = [
    ("bf16", 1024, 1024, 1024, "kn", ["wg64", "wg64n2", "wg64c2"]),
    ("bf16", 1024, 2048, 1024, "kn", ["wg64", "wg64n2", "wg64c2"]),
    ("bf16", 1024, 4096, 1024, "kn", ["wg64", "wg64n2"]),
    ("bf16", 768, 2048, 2048, "nk", ["wg96", "wg96c2", "wg128", "wg128n2"]),
    ("bf16", 1000, 1000, 1000, "kn", ["wg64", "wg64n2"]),
]
SLOTS = 64
buf = torch.zeros(264 * SLOTS, dtype=torch.int64, device="cuda")
os.environ["MYNS_TRACE_PTR"] = str(buf.data_ptr())
flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")


def med(xs):
    xs = [x for x in xs if x == x]
    return st.median(xs) if xs else float("nan")


for kind, m, k, n, lay, variants in CASES:
    torch.manual_seed(0)
    a, b = operands(kind, 1, m, k, n, lay)
    for v in variants:
        myns.set_override("MYNS_MATMUL_KERNEL", v)
        for _ in range(3):
            myns.matmul(a, b)
        S = {}

        def add(key, x):
            S.setdefault(key, []).append(x)

        for rep in range(7):
            flush.zero_()
            buf.zero_()
            torch.cuda.synchronize()
            myns.matmul(a, b)
            torch.cuda.synchronize()
            g = buf.view(264, SLOTS).cpu().tolist()
            ran = [r for r in g if r[0] > 0]
            t0 = min(r[0] for r in ran)
            tend = max(r[61] for r in ran)
            add("span", (tend - t0) / 1e3)
            add("start_skew", (max(r[0] for r in ran) - t0) / 1e3)
            add("end_skew", (tend - min(r[61] for r in ran)) / 1e3)
            for r in ran:
                us = lambda s: (r[s] - r[0]) / 1e3 if r[s] else float("nan")  # noqa: E731
                add("blocks", len(ran))
                add("barrier", us(1))
                add("griddep", us(2))
                add("first A TMA", us(3))
                add("first B TMA", us(56))
                add("cons setmaxnreg", us(5))
                add("first stage in", us(6))
                kts = [r[6 + i] for i in range(48) if r[6 + i]]
                if len(kts) > 4:
                    d = [(kts[i + 1] - kts[i]) / 1e3 for i in range(1, len(kts) - 1)]
                    add("k-tile (median)", st.median(d))
                    add("k-tiles 1..n", (kts[-1] - kts[1]) / 1e3 / (len(kts) - 2))
                add("main loop end", us(54))
                add("B empty wait r1", us(57))
                add("A empty wait r1", us(58))
                add("A loader done", us(4))
                add("before store wait", us(60))
                add("end", us(61))
                if r[60] and r[61]:
                    add("store wait + cluster sync", (r[61] - r[60]) / 1e3)
        flop = 2.0 * m * n * k
        span = med(S["span"])
        print(f"{kind} {m}x{k}x{n} {lay} {v}: span {span:.2f} us ({flop / span / 1e6:.0f} TFLOP/s); " + ", ".join(f"{key} {med(xs):.3f}" for key, xs in S.items() if key != "span"))
    myns.set_override("MYNS_MATMUL_KERNEL", None)
    del a, b
