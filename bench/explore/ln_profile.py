"""Kernel times of layer_norm forward + backward at the Llama bench's shape
(8192 x 2048 bf16, weight and bias), myns against F.layer_norm, from the
torch profiler; plus the wall time of back-to-back calls as bench_llama.py
times them. Run on the GPU machine with MYNS_LIBRARY and PYTHONPATH set
(see flce_profile.sh)."""
import time

import torch
import torch.nn.functional as F

import myns

n, h = 8192, 2048
bf = dict(device="cuda", dtype=torch.bfloat16)
x, w, b = (torch.randn(*s, **bf).requires_grad_() for s in ((n, h), (h,), (h,)))
impls = {"myns": lambda: myns.layer_norm(x, w, b, 1e-5), "eager": lambda: F.layer_norm(x, (h,), w, b, 1e-5)}


def step(fn):
    out = fn()
    out.backward(torch.ones_like(out))
    x.grad = w.grad = b.grad = None


for name, fn in impls.items():
    for _ in range(5):
        step(fn)
    torch.cuda.synchronize()
    for r in range(3):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        e0.record()
        for _ in range(20):
            step(fn)
        e1.record()
        host = (time.perf_counter() - t0) / 20 * 1e6
        torch.cuda.synchronize()
        print(f"{name}: {e0.elapsed_time(e1) / 20 * 1e3:.0f} us per fwd+bwd (device events), host issue {host:.0f} us", flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            step(fn)
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14, max_name_column_width=70), flush=True)
