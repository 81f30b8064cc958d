"""Times skinny-kernel variants (the .so's build.sh makes) against
torch.matmul (cuBLAS) on decode shapes, bf16, H100.

Timing as bench/bench_matmul.py: triton do_bench median (L2 flushed before
each call), interleaved rounds (order reversed every other round), median of
the rounds. Every candidate's output is checked against a float64 reference
(err/bound <= 1 passes). GB/s counts x, the weights and the output once.

  python3 bench/explore/skinny/bench.py --build DIR --configs tag,... [--rounds 3] [--out FILE]
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

import torch
from triton.testing import do_bench

SMS = 132
CLUSTERS = [1, 2, 4, 8]


class Params(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ["x", "w", "c", "M", "N", "K", "sxm", "sxb", "sw", "swb", "scm", "scn", "scb", "batch", "k_chunk", "beta"]]


def cdiv(a, b):
    return -(-a // b)


def plan_ranks(m, n, k, warps=8):
    """src/gemm/plan.rs skinny_plan (main)."""
    strips = cdiv(n, 64)
    target = cdiv(9 * SMS, 10)
    ok = [c for c in CLUSTERS if c == 1 or k // c >= warps * 64]
    for c in ok:
        if strips * c >= target:
            return c
    return ok[-1]


class Lib:
    def __init__(self, path, warps, kalign=32):
        self.lib = ctypes.CDLL(path)
        self.kalign = kalign  # K per cluster block rounded to this (64: the TMA builds' stage)
        self.lib.skinny_launch.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] + [ctypes.c_int] * 5 + [ctypes.c_void_p]
        self.warps = warps

    def fn(self, x, w, out, w_k, ranks, beta=0, vec=True):
        M, K = x.shape
        N = out.shape[1]
        k_chunk = cdiv(cdiv(K, ranks), self.kalign) * self.kalign
        p = Params(x.data_ptr(), w.data_ptr(), out.data_ptr(), M, N, K, x.stride(0), 0,
                   w.stride(0), 0, out.stride(0), out.stride(1), 0, 1, k_chunk, beta)
        mt = 1 if M <= 8 else 2
        smem = self.warps * mt * 8 * 64 * 4
        stream = torch.cuda.current_stream().cuda_stream
        gx = cdiv(N, 64)
        args = (int(w_k), int(vec), mt, ctypes.addressof(p), gx, ranks, 1, self.warps * 32, smem, stream)

        def run():
            r = self.lib.skinny_launch(*args)
            if r != 0:
                raise RuntimeError(f"launch failed: {r}")
        run.keep = p
        return run


def bound_share(out, x, wmat):
    xd, wd = x.double(), wmat.double()
    ref = xd @ wd
    mag = xd.abs() @ wd.abs()
    K = x.shape[1]
    bound = 2 * (2.0**-24 * math.sqrt(K) + 2.0**-24) * mag + 2.0**-8 * ref.abs() * 1.001 + 1e-30
    err = (out.double() - ref).abs()
    if not torch.isfinite(out).all():
        return float("inf")
    return (err / bound).max().item()


def time_read_flush(fn, iters=60):
    """Diagnostic: median event time of fn after L2 is flushed by reading a
    256 MB buffer (L2 left holding clean lines; do_bench's zero_() leaves
    dirty ones, written back while the next kernel runs)."""
    global _flush_buf
    if _flush_buf is None:
        _flush_buf = torch.ones(64 * 1024 * 1024, device="cuda", dtype=torch.float32)
    s = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    fn()
    for i in range(iters):
        _flush_buf.sum()
        s[i].record()
        fn()
        e[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(s, e))


_flush_buf = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--configs", default="")  # tag:WARPS:L:PIPE:MINB[:EVICT],...
    ap.add_argument("--new", default="")      # warps of build/new.so if present
    ap.add_argument("--tma", default="")      # tags of build/tma_<tag>.so (skinny_tma.cu builds)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rep", type=int, default=25)
    ap.add_argument("--problems", default="all")
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--out", default="")
    ap.add_argument("--flush", default="zero", choices=["zero", "read"])  # read: every candidate timed after a read flush
    ap.add_argument("--read-flush", default="")  # candidate names also timed after a read flush
    args = ap.parse_args()
    # old.so (old_inst.cu) names the kernels of before the streaming build: optional.
    libs = {"old": Lib(f"{args.build}/old.so", 8)} if os.path.exists(f"{args.build}/old.so") else {}
    if args.new:
        libs["new"] = Lib(f"{args.build}/new.so", int(args.new))
    for c in [c for c in args.configs.split(",") if c]:
        tag, w = c.split(":")[:2]
        libs[tag] = Lib(f"{args.build}/var_{tag}.so", int(w))
    for tag in [t for t in args.tma.split(",") if t]:
        libs["tma_" + tag] = Lib(f"{args.build}/tma_{tag}.so", 8, kalign=64)
    rank_set = [int(r) for r in args.ranks.split(",")]
    probs = []
    for lay in ["kn", "nk"]:
        for m in [1, 16]:
            for k, n in [(4096, 4096), (4096, 14336), (14336, 4096)]:
                probs.append((lay, m, k, n))
    for m in [1, 16]:
        for n in [32000, 128256]:
            probs.append(("nk", m, 4096, n))
    if args.problems != "all":
        # Any "lay:MxKxN" (not only the list above).
        probs = []
        for spec in args.problems.split(","):
            lay, dims = spec.split(":")
            m, k, n = (int(v) for v in dims.split("x"))
            probs.append((lay, m, k, n))
    results = []
    t0 = time.time()
    for lay, m, k, n in probs:
        torch.manual_seed(m * 7 + k * 3 + n)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        if lay == "kn":
            w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)  # N-major: w[k][n]
            wmat, w_k = w, False
        else:
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)  # K-major: w[n][k] (nn.Linear)
            wmat, w_k = w.t(), True
        cands = {"cublas": (lambda: torch.matmul(x, wmat), None)}
        outs = {}
        pr = plan_ranks(m, n, k)
        for tag, lib in libs.items():
            rs = [pr] if tag == "old" else [r for r in rank_set if r == 1 or k // r >= 256]
            for r in rs:
                o = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                name = f"{tag}/r{r}"
                cands[name] = (lib.fn(x, w, o, w_k, r), o)
        # correctness first
        errs = {}
        for name, (f, o) in cands.items():
            if o is None:
                errs[name] = bound_share(f(), x, wmat)
            else:
                o.fill_(float("nan"))
                f()
                torch.cuda.synchronize()
                errs[name] = bound_share(o, x, wmat)
        times = {name: [] for name in cands}
        names = list(cands)
        for rnd in range(args.rounds):
            for name in (names if rnd % 2 == 0 else names[::-1]):
                if args.flush == "read":
                    times[name].append(time_read_flush(cands[name][0], iters=40))
                else:
                    times[name].append(do_bench(cands[name][0], warmup=5, rep=args.rep, return_mode="median"))
        gbytes = (m * k + k * n + m * n) * 2 / 1e9
        rf = {}
        for want in [c for c in args.read_flush.split(",") if c]:
            for name in cands:
                if name == want or (want.endswith("/plan") and name == want.replace("plan", f"r{pr}")):
                    rf[name] = time_read_flush(cands[name][0])
        med = {name: statistics.median(ts) for name, ts in times.items()}
        cub = med["cublas"]
        shape = f"{lay}:{m}x{k}x{n}"
        print(f"== {shape} ({k * n * 2 / 1e6:.0f} MB weights, plan ranks {pr})  cublas {cub * 1e3:.1f} us {gbytes / cub * 1e3:.0f} GB/s", flush=True)
        for name, t in rf.items():
            print(f"   read-flush {name:14s} {t * 1e3:8.1f} us {gbytes / t * 1e3:6.0f} GB/s", flush=True)
        rows = sorted(med.items(), key=lambda kv: kv[1])
        for name, t in rows:
            print(f"   {name:14s} {t * 1e3:8.1f} us {gbytes / t * 1e3:6.0f} GB/s  x{cub / t:5.3f} cublas  err/bound {errs[name]:.2f}"
                  f"  rounds {' '.join(f'{v * 1e3:.1f}' for v in times[name])}", flush=True)
        results.append({"shape": shape, "layout": lay, "m": m, "k": k, "n": n, "plan_ranks": pr,
                        "median_ms": med, "read_flush_ms": rf, "rounds_ms": times, "err_bound": errs, "gbytes": gbytes})
        del x, w, wmat, cands, outs
        torch.cuda.empty_cache()
    print(f"{time.time() - t0:.0f} s", flush=True)
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
