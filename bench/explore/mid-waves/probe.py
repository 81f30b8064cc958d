"""Which kernel, grid and cluster cuBLAS (torch.matmul) and myns run on each
product, from a torch.profiler trace (kernel durations are single runs, L2
warm: read them as a guide, not as the benchmark).

    python bench/explore/mid-waves/probe.py --shapes "M,K,N;..." [--layout kn]
"""

import argparse
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import bench_matmul as bm  # noqa: E402
import myns  # noqa: E402,F401


def kernels(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    out = []
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            out.append((e["name"][:90], a.get("grid"), a.get("block"), a.get("cluster", a.get("cluster size")), a.get("registers per thread"), a.get("shared memory"), e.get("dur")))
    return out[len(out) * 2 // 3:]  # the last of the three runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--layout", default="nk", choices=["nk", "kn"])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, commit {os.environ.get('MYNS_GIT_COMMIT', '?')}, weights {args.layout}, {args.dtype}")
    for s in args.shapes.split(";"):
        m, k, n = map(int, s.split(","))
        a, b = bm.operands(args.dtype, 1, m, k, n, args.layout)
        for who, fn in (("torch", lambda: torch.matmul(a, b)), ("myns", lambda: torch.ops.myns.matmul(a, b))):
            for name, grid, block, cluster, regs, smem, dur in kernels(fn):
                print(f"{m}x{k}x{n} {who:5} {dur} us grid={grid} block={block} cluster={cluster} regs={regs} smem={smem} {name}", flush=True)
        del a, b


if __name__ == "__main__":
    main()
