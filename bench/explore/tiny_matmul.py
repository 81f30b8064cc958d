"""Tiny products in CUDA graphs (the overhead report's `matmul 16x16 @ 16x16
float32`: 4.6 against aten's 2.2 device µs per op at 4fe35e7): device µs per
op in a graph of 100 calls, per forced variant beside torch.matmul, and the
kernels one automatic call queues (torch.profiler).

    python bench/explore/tiny_matmul.py          # forced variants on 7 shapes, with the kernels
    python bench/explore/tiny_matmul.py --grid   # auto / generic / torch over M, N, K and batch
"""
import itertools
import statistics
import sys

import torch

import myns

N_OPS, REPLAYS, ROUNDS = 100, 50, 5


def capture(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(N_OPS):
            fn()
    torch.cuda.synchronize()
    return g


def per_op_us(g):
    g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(REPLAYS):
        g.replay()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / (REPLAYS * N_OPS)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = [("f32", torch.float32, (16, 16, 16)), ("f32", torch.float32, (64, 64, 64)), ("f32", torch.float32, (1, 64, 64)),
             ("bf16", torch.bfloat16, (16, 16, 16)), ("bf16", torch.bfloat16, (64, 64, 64)), ("bf16", torch.bfloat16, (128, 128, 128)),
             ("bf16", torch.bfloat16, (256, 256, 256))]
    variants = ["auto", "skinny", "16", "64", "128", "generic", "wg", "wgh64"]
    for kind, dt, (m, k, n) in cases:
        a = torch.randn(m, k, dtype=dt, device="cuda")
        b = torch.randn(k, n, dtype=dt, device="cuda")
        graphs = {"torch": capture(lambda: torch.matmul(a, b))}
        for v in variants:
            myns.set_override("MYNS_MATMUL_KERNEL", v)
            try:
                graphs[v] = capture(lambda: torch.ops.myns.matmul(a, b))
            except Exception as e:  # a variant this dtype lacks
                print(f"  {v}: {type(e).__name__}: {str(e)[:80]}")
        myns.set_override("MYNS_MATMUL_KERNEL", None)
        t = {k_: [] for k_ in graphs}
        for r in range(ROUNDS):
            for k_ in (list(graphs) if r % 2 == 0 else list(graphs)[::-1]):
                t[k_].append(per_op_us(graphs[k_]))
        med = {k_: statistics.median(v) for k_, v in t.items()}
        print(f"{kind} {m}x{k}x{n}: " + "  ".join(f"{k_} {v:.2f}" for k_, v in med.items()), flush=True)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            torch.ops.myns.matmul(a, b)
            torch.cuda.synchronize()
            torch.matmul(a, b)
            torch.cuda.synchronize()
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                print(f"    kernel {ev.name[:70]} {ev.device_time:.2f} us")


def grid():
    """auto, generic and torch.matmul (bmm for batch > 1) over small shapes."""
    torch.backends.cuda.matmul.allow_tf32 = False
    print("kind batch M K N: torch auto generic (device us per op, 100-op graphs)")
    for kind, dt in [("f32", torch.float32), ("bf16", torch.bfloat16)]:
        for batch, mn, k in itertools.product([1, 4], [16, 64, 128], [16, 64, 128, 256]):
            shape = (batch, mn, k) if batch > 1 else (mn, k)
            a = torch.randn(*shape, dtype=dt, device="cuda")
            b = torch.randn(*shape[:-2], k, mn, dtype=dt, device="cuda")
            op = torch.ops.myns.bmm if batch > 1 else torch.ops.myns.matmul
            graphs = {"torch": capture(lambda: torch.matmul(a, b))}
            for v in ["auto", "generic"]:
                myns.set_override("MYNS_MATMUL_KERNEL", v)
                graphs[v] = capture(lambda: op(a, b))
            myns.set_override("MYNS_MATMUL_KERNEL", None)
            t = {k_: [] for k_ in graphs}
            for r in range(ROUNDS):
                for k_ in (list(graphs) if r % 2 == 0 else list(graphs)[::-1]):
                    t[k_].append(per_op_us(graphs[k_]))
            med = {k_: statistics.median(v) for k_, v in t.items()}
            print(f"{kind} {batch} {mn} {k} {mn}: " + "  ".join(f"{v:.2f}" for v in med.values()), flush=True)


if __name__ == "__main__":
    grid() if "--grid" in sys.argv else main()
