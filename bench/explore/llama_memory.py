"""Where the Llama training step's peak memory goes: myns.patch against
Liger-Kernel (and HF), on bench_llama.py's model (2026-11-26).

For each implementation: the peak of one step above what was allocated
when it began (after two warm-up steps), and the live allocations at that
peak, from the caching allocator's recorded history (alloc / free events
replayed), grouped by the first two Python frames outside torch that made
them (autograd's backward runs on a thread with no Python frames:
"<backward>").

Run on the GPU machine from the repository root with the bundle in .gpu/
and Liger-Kernel on the path (scripts/gpu_run.sh installs it to /tmp/site):
    PYTHONPATH=python_loader:bench:/tmp/site MYNS_LIBRARY=$PWD/.gpu/libmyns.so \
        python3 bench/explore/llama_memory.py [--layers 16] [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import bench_llama  # noqa: E402


def site(frames, depth=2):
    keep = [f for f in frames if "/torch/" not in f["filename"] and not f["filename"].startswith("<")]
    if not keep:
        return "<backward>" if not frames else "torch: " + f"{os.path.basename(frames[0]['filename'])}:{frames[0]['line']}"
    return " < ".join(f"{os.path.basename(f['filename'])}:{f['line']} {f['name']}" for f in keep[:depth])


def live_at_peak(trace):
    """Replays the allocator's events: (peak bytes, {site: bytes} live then)."""
    live, cur, peak, at = {}, 0, 0, {}
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = (e["size"], e.get("frames", []))
            cur += e["size"]
            if cur > peak:
                peak, at = cur, dict(live)
        elif e["action"] == "free_requested" and e["addr"] in live:
            cur -= live.pop(e["addr"])[0]
    by = collections.Counter()
    for size, frames in at.values():
        by[site(frames)] += size
    return peak, by


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--impls", default="hf,liger,myns")
    args = p.parse_args()
    base, _, batch, seq, (ids,) = bench_llama.cuda_model(args.layers, args.batch)
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}; layers {args.layers}, batch {batch} x {seq}")
    for impl in args.impls.split(","):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        base_mem = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        m, step = bench_llama._build(impl, base, False)
        for _ in range(2):
            step(ids)
        torch.cuda.synchronize()
        print(f"\n=== {impl}: peak over 2 steps {(torch.cuda.max_memory_allocated() - base_mem) / 2**30:.3f} GiB "
              f"above the state before building")
        torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
        t0 = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(ids)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        print(f"step peak above the step's start: {(torch.cuda.max_memory_allocated() - t0) / 2**20:.0f} MiB "
              f"(start {t0 / 2**30:.3f} GiB allocated, model+optimizer state {(t0 - base_mem) / 2**30:.3f} GiB)")
        trace = snap["device_traces"][torch.cuda.current_device()]
        peak, by = live_at_peak(trace)
        print(f"replayed: {peak / 2**20:.0f} MiB above the step's start at its peak; live then, by site (MiB):")
        for s, b in by.most_common(args.top):
            print(f"  {b / 2**20:9.1f}  {s}")
        del m, step, snap, trace
    return 0


if __name__ == "__main__":
    sys.exit(main())
