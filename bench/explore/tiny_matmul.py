"""Tiny products in CUDA graphs (the overhead report's `matmul 16x16 @ 16x16
float32`: 4.6 against aten's 2.2 device µs per op at 4fe35e7): device µs per
op in a graph of 100 calls (bench/common.py `graph_times`), per forced
variant beside torch.matmul, and the kernels one automatic call queues
(torch.profiler).

    python bench/explore/tiny_matmul.py          # forced variants on 7 shapes, with the kernels
    python bench/explore/tiny_matmul.py --grid   # auto / generic / torch over M, N, K and batch

(bench/explore/tiny-matmul-h100.txt was made by this script's first version,
in ce0d548, which captured and timed its graphs itself the same way.)
"""
import itertools
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import graph_times  # noqa: E402

import myns  # noqa: E402


def forced(variant, op, a, b):
    """A call of `op` under MYNS_MATMUL_KERNEL=variant (set at each call, so
    at capture time too)."""
    def call(_i):
        myns.set_override("MYNS_MATMUL_KERNEL", variant)
        return op(a, b)
    return call


def medians(impls):
    t = graph_times(impls, n_calls=100, n_rounds=5, reps=50)
    myns.set_override("MYNS_MATMUL_KERNEL", None)
    return {k: statistics.median(v) for k, v in t.items()}


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = [("f32", torch.float32, (16, 16, 16)), ("f32", torch.float32, (64, 64, 64)), ("f32", torch.float32, (1, 64, 64)),
             ("bf16", torch.bfloat16, (16, 16, 16)), ("bf16", torch.bfloat16, (64, 64, 64)), ("bf16", torch.bfloat16, (128, 128, 128)),
             ("bf16", torch.bfloat16, (256, 256, 256))]
    variants = ["auto", "skinny", "16", "64", "128", "generic", "wg", "wgh64"]
    for kind, dt, (m, k, n) in cases:
        a = torch.randn(m, k, dtype=dt, device="cuda")
        b = torch.randn(k, n, dtype=dt, device="cuda")
        impls = {"torch": lambda _i: torch.matmul(a, b)}
        impls.update({v: forced(v, torch.ops.myns.matmul, a, b) for v in variants})
        med = medians(impls)
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
            impls = {"torch": lambda _i: torch.matmul(a, b), "auto": forced("auto", op, a, b), "generic": forced("generic", op, a, b)}
            med = medians(impls)
            print(f"{kind} {batch} {mn} {k} {mn}: " + "  ".join(f"{v:.2f}" for v in med.values()), flush=True)


if __name__ == "__main__":
    grid() if "--grid" in sys.argv else main()
