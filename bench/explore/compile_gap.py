"""Why the compiled myns Llama step is slower than the eager one (H100 at
df7f1af: 140.0 against 123.2 ms; HF's gets faster, 161.5 -> 135.5).

Builds bench_llama's model (fewer layers by default: the gap is per layer),
then for each variant: warm-up steps (compiles), the median of three timed
steps, and one profiled step: the GPU kernels by total time, how many
launches, GPU busy time against the step's wall time (host-bound or not).
Variants: myns eager and compiled, compiled with inductor's custom-op layout
constraint relaxed (flexible_layout: no stride-matching copies around our
ops), HF compiled.

    python3 bench/explore/compile_gap.py --layers 8 [--only myns,myns-c]
    python3 bench/explore/compile_gap.py --layers 16 --only myns,liger --top 60
"""

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import bench_llama  # noqa: E402


def profile_step(step, ids, top, gaps=0):
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        step(ids)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy = sum(e.device_time for e in kernels) / 1e3
    by = {}
    for e in kernels:
        n, t = by.get(e.name, (0, 0.0))
        by[e.name] = (n + 1, t + e.device_time / 1e3)
    rows = sorted(by.items(), key=lambda kv: -kv[1][1])
    print(f"  profiled step: wall {wall * 1e3:.1f} ms, GPU busy {busy:.1f} ms, {len(kernels)} kernels")
    for name, (n, t) in rows[:top]:
        print(f"    {t:8.2f} ms {n:5d}x  {name[:150]}")
    if gaps:
        print_gaps(kernels, gaps)
    return rows


def print_gaps(kernels, top):
    """Where the GPU waits: idle time between one kernel's end and the next
    one's start (kernels of one stream), the largest gaps with their
    neighbours, and idle time summed by the kernel that ends it."""
    ev = sorted((e.time_range.start, e.time_range.end, e.name) for e in kernels if not e.name.startswith("Optimizer."))
    t0, idle, out, by = ev[0][0], 0.0, [], {}
    end = ev[0][1]
    for (s, e, name), prev in zip(ev[1:], ev[:-1]):
        g = s - end
        if g > 0:
            idle += g
            out.append((g, s - t0, prev[2], name))
            by[name[:70]] = by.get(name[:70], 0.0) + g
        end = max(end, e)
    print(f"  idle between kernels: {idle / 1e3:.2f} ms over {(end - t0) / 1e3:.1f} ms; gaps over 20 us: "
          f"{sum(g for g, *_ in out if g > 20) / 1e3:.2f} ms in {sum(1 for g, *_ in out if g > 20)}")
    for g, at, a, b in sorted(out, reverse=True)[:top]:
        print(f"    {g:8.1f} us at {at / 1e3:7.2f} ms  after {a[:55]}  before {b[:55]}")
    print("  idle summed by the kernel after it:")
    for name, g in sorted(by.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {g / 1e3:8.2f} ms  {name}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--only", default="myns,myns-c,myns-cflex,hf-c")
    p.add_argument("--gaps", type=int, default=0, help="also list the N largest idle gaps between kernels")
    a = p.parse_args()
    base, _, batch, seq, data = bench_llama.cuda_model(a.layers, a.batch, 4)
    print(f"Llama {sum(p.numel() for p in base.parameters()) / 1e9:.2f}B params, {a.layers} layers, {batch} x {seq}")
    variants = {
        "myns": ("myns", False, None),
        "myns-c": ("myns", True, None),
        "myns-cflex": ("myns", True, "flexible_layout"),
        "hf": ("hf", False, None),
        "liger": ("liger", False, None),
        "hf-c": ("hf", True, None),
    }
    for key in a.only.split(","):
        impl, comp, layout = variants[key]
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        t0 = time.time()
        old = torch._functorch.config.custom_op_default_layout_constraint
        if layout:
            torch._functorch.config.custom_op_default_layout_constraint = layout
        try:
            m, step = bench_llama._build(impl, base, comp)
            for ids in data[:3]:
                step(ids)
            torch.cuda.synchronize()
            build_s = time.time() - t0
            peak = (torch.cuda.max_memory_allocated() - before) / 2**30
            times = []
            for _ in range(3):
                times.append(bench_llama._time_steps(step, data[3], 2, torch.cuda.synchronize))
            t = statistics.median(times)
            print(f"{key}: step {t * 1e3:.1f} ms ({batch * seq / t:.0f} tok/s), peak {peak:.2f} GiB, "
                  f"build+warm-up {build_s:.0f} s", flush=True)
            profile_step(step, data[3], a.top, a.gaps)
            del m, step
        finally:
            torch._functorch.config.custom_op_default_layout_constraint = old
        sys.stdout.flush()


if __name__ == "__main__":
    main()
