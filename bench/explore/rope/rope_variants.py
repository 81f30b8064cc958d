"""Exploration (not a shipped benchmark), on the H100: variants of rope's
16-byte bfloat16 kernel, against the library's `myns.rope` and Liger-Kernel's
rope, at HF's layouts (q and k transposed views of [B, S, H, D]).

The variants (bench/explore/rope/rope_variant.cu, and kernels/rope.cu as
`base`) are cubins built beforehand with nvcc (see rope_variants.sh) and
launched here through the driver API (ctypes), with the launch shape
src/ops/rope.rs would give them. Each is checked against `myns.rope` and a
float64 reference, then timed as bench_rowwise.py times row ops: CUDA graphs
of N calls over rotating input sets, interleaved rounds, medians.

    OUT=<dir> MYNS_LIBRARY=... PYTHONPATH=<liger>:python_loader \\
        python3 bench/explore/rope/rope_variants.py --cubins DIR [--rounds 7]
"""
import argparse
import ctypes
import json
import math
import os
import statistics

import torch

import myns

cuda = ctypes.CDLL("libcuda.so.1")
I64 = ctypes.c_int64
PTR = ctypes.c_void_p


class RopeParams(ctypes.Structure):  # kernels/rope.cu
    _fields_ = [("x", PTR * 2), ("out", PTR * 2), ("cos", PTR), ("sin", PTR), ("heads", I64 * 2), ("batch", I64),
                ("seq", I64), ("dim", I64), ("xs", (I64 * 4) * 2), ("os", (I64 * 4) * 2), ("cs", I64 * 3), ("lanes", I64)]


class RopeTm(ctypes.Structure):  # rope_variant.cu
    _fields_ = [("x", PTR * 2), ("out", PTR * 2), ("cos", PTR), ("sin", PTR), ("ts", I64 * 2), ("ots", I64 * 2),
                ("hs", I64 * 2), ("ohs", I64 * 2), ("hq", I64), ("heads", I64), ("tokens", I64), ("seq", I64),
                ("dim", I64), ("cts", I64)]


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUDA driver error {rc}")


def function(path, name):
    mod, fn = PTR(), PTR()
    data = open(path, "rb").read()
    check(cuda.cuModuleLoadData(ctypes.byref(mod), data), f"load {path}")
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), f"{path}:{name}")
    return fn


def launch(fn, grid, block, params):
    args = (PTR * 1)(ctypes.addressof(params))
    stream = PTR(torch.cuda.current_stream().cuda_stream)
    check(cuda.cuLaunchKernel(fn, grid[0], grid[1], 1, block[0], block[1], 1, 0, stream, args, None), "launch")


def lanes_shape(pairs, heads, per_pass):
    """src/ops/rope.rs's block shape for a kernel taking `per_pass` heads per pass."""
    bx = min(pairs, 256)
    most = max(256 // bx, 1)
    rounds = math.ceil(heads / (per_pass * most))
    lanes = math.ceil(heads / (per_pass * rounds))
    per_block = max(most // lanes, 1)
    return bx, lanes, per_block


def runner(kind, fn, q, k, c, s, extra):
    """A callable (inputs -> outputs) launching variant `kind`."""
    B, hq, S, D = q.shape
    hk = k.shape[1]
    heads, pairs, tokens = hq + hk, D // 2 // 8, B * S

    def run(q, k, c, s):
        oq, ok = torch.empty_like(q), torch.empty_like(k)
        if kind == "tm":
            per_block = extra["per_block"]
            p = RopeTm()
            p.x[:] = [q.data_ptr(), k.data_ptr()]
            p.out[:] = [oq.data_ptr(), ok.data_ptr()]
            p.cos, p.sin = c.data_ptr(), s.data_ptr()
            p.ts[:] = [q.stride(2), k.stride(2)]
            p.ots[:] = [oq.stride(2), ok.stride(2)]
            p.hs[:] = [q.stride(1), k.stride(1)]
            p.ohs[:] = [oq.stride(1), ok.stride(1)]
            p.hq, p.heads, p.tokens, p.seq, p.dim = hq, heads, tokens, S, D
            p.cts = D if (c.shape[0] == B or B == 1) else -1
            gy = min(math.ceil(tokens / per_block), extra.get("max_grid", 65535))
            launch(fn, (1, gy), (pairs, heads * per_block), p)
        else:
            bx, lanes, per_block = lanes_shape(pairs, heads, extra["per_pass"])
            p = RopeParams()
            p.x[:] = [q.data_ptr(), k.data_ptr()]
            p.out[:] = [oq.data_ptr(), ok.data_ptr()]
            p.cos, p.sin = c.data_ptr(), s.data_ptr()
            p.heads[:] = [hq, hk]
            p.batch, p.seq, p.dim = B, S, D
            for t, (x, o) in enumerate([(q, oq), (k, ok)]):
                p.xs[t][:] = list(x.stride())
                p.os[t][:] = list(o.stride())
            p.cs[:] = [0 if c.shape[0] == 1 else S * D, D, 1]
            p.lanes = lanes
            launch(fn, (math.ceil(pairs / bx), min(math.ceil(tokens / per_block), 65535)), (bx, lanes * per_block), p)
        return oq, ok
    return run


def make(B, S, hq, hk, D):
    q = torch.randn(B, S, hq, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    k = torch.randn(B, S, hk, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    ang = torch.arange(S, device="cuda", dtype=torch.float32)[:, None] * torch.rand(D // 2, device="cuda")
    ang = torch.cat([ang, ang], -1)[None]
    return q, k, ang.cos().bfloat16(), ang.sin().bfloat16()


def reference(q, k, c, s):
    def rot(x):
        h = x.shape[-1] // 2
        return torch.cat([-x[..., h:], x[..., :h]], -1)
    c, s = c.double().unsqueeze(1), s.double().unsqueeze(1)
    return [x.double() * c + rot(x.double()) * s for x in (q, k)]


def graph_time(fns, sets, n_calls, rounds):
    """{name: [µs per call per round]}: one CUDA graph of n_calls per impl, interleaved rounds."""
    graphs = {}
    for name, fn in fns.items():
        for i in range(3):
            fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(n_calls):
                fn(*sets[i % len(sets)])
        graphs[name] = g
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, g in graphs.items():
            g.replay()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            times[name].append(a.elapsed_time(b) * 1e3 / n_calls)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")  # PyTorch's context, current on this thread
    cb = a.cubins
    fns = {
        "base": (function(f"{cb}/base.cubin", "rope_vec_bf16"), "lanes", {"per_pass": 2}),
        "h1 m4": (function(f"{cb}/var-m4.cubin", "rope_h1"), "lanes", {"per_pass": 1}),
        "h1 m3": (function(f"{cb}/var-m3.cubin", "rope_h1"), "lanes", {"per_pass": 1}),
        "h2 m3": (function(f"{cb}/var-m3.cubin", "rope_h2"), "lanes", {"per_pass": 2}),
        "h2 m2": (function(f"{cb}/var-m2.cubin", "rope_h2"), "lanes", {"per_pass": 2}),
        "tm 64r pb1": (function(f"{cb}/tm1.cubin", "rope_tm"), "tm", {"per_block": 1}),
        "tm 64r pb2": (function(f"{cb}/tm1.cubin", "rope_tm"), "tm", {"per_block": 2}),
        "tm 64r pb1 g792": (function(f"{cb}/tm1.cubin", "rope_tm"), "tm", {"per_block": 1, "max_grid": 792}),
        "tm 32r pb2": (function(f"{cb}/tm2.cubin", "rope_tm"), "tm", {"per_block": 2}),
    }
    try:
        from liger_kernel.ops.rope import LigerRopeFunction
    except Exception as e:  # noqa: BLE001
        LigerRopeFunction = None
        print("no Liger:", e)
    results = []
    for (B, S, hq, hk, D) in [(1, 8192, 16, 4, 128), (4, 2048, 32, 4, 64), (4, 2048, 32, 8, 128)]:
        first = make(B, S, hq, hk, D)
        nbytes = 2 * sum(t.numel() * 2 for t in first[:2]) + 2 * first[2].numel() * 2
        sets = [first] + [make(B, S, hq, hk, D) for _ in range(max(1, math.ceil(2 * 50e6 / (nbytes / 2))) - 1)]
        ref = reference(*first)
        want = myns.rope(*first)
        calls = {"myns": lambda q, k, c, s: myns.rope(q, k, c, s)}
        if LigerRopeFunction is not None:
            calls["liger"] = lambda q, k, c, s: LigerRopeFunction.apply(q, k, c, s)
        line = f"B={B} S={S} Hq={hq} Hk={hk} D={D} ({nbytes / 1e6:.1f} MB)"
        print(f"\n{line}")
        for name, (fn, kind, extra) in fns.items():
            run = runner(kind, fn, *first[:2], *first[2:], extra)
            got = run(*first)
            torch.cuda.synchronize()
            same = all(torch.equal(g, w) for g, w in zip(got, want))
            err = max(((g.double() - r).abs() / (r.abs() + 1e-3)).max().item() for g, r in zip(got, ref))
            print(f"  {name:>18}: equal to myns.rope {same}, worst relative error {err:.2e}")
            if err > 2 ** -6:
                print("  FAILED CHECK", name)
                continue
            calls[name] = run
        n_calls = 32
        times = graph_time(calls, sets, n_calls, a.rounds)
        med = {k: statistics.median(v) for k, v in times.items()}
        best = min(v for k, v in med.items() if k == "liger") if "liger" in med else med["myns"]
        for k in sorted(med, key=med.get):
            print(f"  {k:>18} {med[k]:8.2f} us  {nbytes / med[k] / 1e6:5.2f} TB/s  vs liger {best / med[k]:.3f}  vs myns {med['myns'] / med[k]:.3f}")
        results.append({"shape": [B, S, hq, hk, D], "bytes": nbytes, "us": med})
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "rope-variants.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
