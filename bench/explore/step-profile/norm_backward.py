"""Kernel times (torch.profiler, per call, mean of 20 after an L2 flush) of
rms_norm, add_rms_norm and layer_norm forward + backward with the library in
MYNS_LIBRARY, beside eager F.layer_norm / F.rms_norm; run once per library
and compare (bench/explore/step-profile/ab.sh).

    python bench/explore/step-profile/norm_backward.py [--calls 20]
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "..", "python_loader"), os.path.join(HERE, "..")]
import myns  # noqa: E402,F401
from matmul_kernel_times import kernel_times  # noqa: E402

EPS = 1e-6
SHAPES = [(8192, 2048, torch.bfloat16), (16384, 4096, torch.bfloat16), (4096, 8192, torch.bfloat16), (8192, 2048, torch.float32), (2048, 16384, torch.bfloat16), (4096, 8192, torch.float32)]


def cases(n, h, dt):
    g = lambda *s: torch.randn(*s, device="cuda", dtype=dt).requires_grad_()  # noqa: E731
    x, r, w, b = g(n, h), g(n, h), g(h), g(h)
    yield "rms_norm", lambda: torch.ops.myns.rms_norm(x, w, EPS), [x, w]
    yield "rms_norm eager", lambda: F.rms_norm(x, (h,), w, EPS), [x, w]
    yield "add_rms_norm", lambda: torch.ops.myns.add_rms_norm(x, r, w, EPS), [x, r, w]
    yield "layer_norm", lambda: torch.ops.myns.layer_norm(x, w, b, EPS), [x, w, b]
    yield "layer_norm eager", lambda: F.layer_norm(x, (h,), w, b, EPS), [x, w, b]


def fwd_bwd(fn, leaves):
    def f():
        out = fn()
        outs = out if isinstance(out, tuple) else (out,)
        torch.autograd.backward(list(outs), [torch.ones_like(o) for o in outs])
        for t in leaves:
            t.grad = None
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    for n, h, dt in SHAPES:
        for name, fn, leaves in cases(n, h, dt):
            # The flush is a fill of ints; the partial sums' zero fill (floats) counts.
            per = kernel_times(fwd_bwd(fn, leaves), args.calls, skip=("fillfunctor<int>",))
            parts = "  ".join(f"{k[:40]} {v:.1f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:5])
            print(f"{name:18s} {n}x{h} {str(dt)[6:]:8s} {sum(per.values()):8.1f} us  | {parts}", flush=True)


if __name__ == "__main__":
    main()
