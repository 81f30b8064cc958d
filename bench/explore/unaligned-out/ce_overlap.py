"""Exploration (2026-11-28): can the padded copy that an unaligned operand
takes (N = 4095: b; K = 4095: a) run on the copy engine, chunk by chunk on a
side stream, while the product runs on the chunks already copied?

Today a pitch that TMA cannot read (rows not a whole number of 16 bytes
apart) is first copied by an SM kernel into a padded buffer (about 25 us of
a 4096 x 4096 x 4095 product's 225 on the H100), then multiplied. Here the
copy is a cudaMemcpy2DAsync (done by the DMA copy engines, not the SMs) on a
side stream, split into column chunks of b (or row chunks of a); each
chunk's product waits only for its own copy. Prints per variant the median
wall time of a call sequence (CUDA events, `--rounds` interleaved rounds of
`--calls` calls).

    python bench/explore/unaligned-out/ce_overlap.py [--rounds 5] [--calls 10]

Result (H200, library of e669e54): ce-overlap-h200-e669e54.log; see
bench/explore/README.md (unaligned-out/).
"""

import argparse
import ctypes
import glob
import os
import statistics

import torch

import myns  # noqa: F401


def cudart():
    site = os.path.dirname(os.path.dirname(torch.__file__))
    for p in sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcudart.so*"))) + ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]:
        try:
            return ctypes.CDLL(p)
        except OSError:
            pass
    raise SystemExit("no libcudart")


RT = cudart()
RT.cudaMemcpy2DAsync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]


def memcpy2d(dst, dpitch, src, spitch, width, height, stream):
    rc = RT.cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, 3, stream.cuda_stream)
    assert rc == 0, f"cudaMemcpy2DAsync: {rc}"


def timed(fn, calls):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    s.record()
    for _ in range(calls):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1000 / calls


def chunks_of(n, sizes):
    out, c0 = [], 0
    for sz in sizes:
        c1 = min(n, c0 + sz)
        out.append((c0, c1))
        c0 = c1
    if c0 < n:
        out.append((c0, n))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    side = torch.cuda.Stream()
    M = K = 4096
    es = 2
    res = {}

    # --- N = 4095: b [K, 4095] row-major (pitch 8190 bytes) ---
    N = 4095
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
    bp = torch.zeros(K, 4096, device=dev, dtype=torch.bfloat16)
    b_al = torch.randn(K, 4096, device=dev, dtype=torch.bfloat16)

    def ce_b(c0, c1, stream):
        memcpy2d(bp.data_ptr() + es * c0, 4096 * es, b.data_ptr() + es * c0, N * es, es * (c1 - c0), K, stream)

    def n_chunked(sizes):
        def run():
            main = torch.cuda.current_stream()
            side.wait_stream(main)
            evs = []
            for c0, c1 in chunks_of(N, sizes):
                ce_b(c0, c1, side)
                ev = torch.cuda.Event()
                ev.record(side)
                evs.append((ev, c0, c1))
            for ev, c0, c1 in evs:
                main.wait_event(ev)
                torch.ops.myns.matmul(a, bp[:, c0:c1])
        return run

    def n_concurrent():
        main = torch.cuda.current_stream()
        side.wait_stream(main)
        ce_b(0, N, side)
        torch.ops.myns.matmul(a, b_al)
        main.wait_stream(side)

    # --- K = 4095: a [M, 4095] row-major ---
    Kp = 4095
    a2 = torch.randn(M, Kp, device=dev, dtype=torch.bfloat16)
    b2 = torch.randn(Kp, 4096, device=dev, dtype=torch.bfloat16)
    a2p = torch.zeros(M, 4096, device=dev, dtype=torch.bfloat16)

    def ce_a(r0, r1, stream):
        memcpy2d(a2p.data_ptr() + r0 * 4096 * es, 4096 * es, a2.data_ptr() + r0 * Kp * es, Kp * es, Kp * es, r1 - r0, stream)

    def k_chunked(sizes):
        def run():
            main = torch.cuda.current_stream()
            side.wait_stream(main)
            evs = []
            for r0, r1 in chunks_of(M, sizes):
                ce_a(r0, r1, side)
                ev = torch.cuda.Event()
                ev.record(side)
                evs.append((ev, r0, r1))
            for ev, r0, r1 in evs:
                main.wait_event(ev)
                torch.ops.myns.matmul(a2p[r0:r1, :Kp], b2)
        return run

    variants = {
        "N4095 myns today (pack kernel + product)": lambda: torch.ops.myns.matmul(a, b),
        "N4095 product alone (b already padded)": lambda: torch.ops.myns.matmul(a, bp[:, :N]),
        "N4096 aligned neighbour": lambda: torch.ops.myns.matmul(a, b_al),
        "N4095 torch.matmul": lambda: torch.matmul(a, b),
        "N4095 copy engine alone, whole b": lambda: ce_b(0, N, torch.cuda.current_stream()),
        "N4095 SM copy alone (torch copy_)": lambda: bp[:, :N].copy_(b),
        "N4095 copy engine beside the aligned product": n_concurrent,
        "N4095 chunked 4 x 1024": n_chunked([1024] * 4),
        "N4095 chunked 512,1024,1280,rest": n_chunked([512, 1024, 1280]),
        "N4095 chunked 256,768,1024,rest": n_chunked([256, 768, 1024]),
        "N4095 chunked 8 x 512": n_chunked([512] * 8),
        "K4095 myns today": lambda: torch.ops.myns.matmul(a2, b2),
        "K4095 product alone (a already padded)": lambda: torch.ops.myns.matmul(a2p[:, :Kp], b2),
        "K4095 copy engine alone, whole a": lambda: ce_a(0, M, torch.cuda.current_stream()),
        "K4095 chunked 4 x 1024 rows": k_chunked([1024] * 4),
        "K4095 chunked 512,1024,1280,rest rows": k_chunked([512, 1024, 1280]),
    }
    for _ in range(args.rounds):
        for name, fn in variants.items():
            res.setdefault(name, []).append(timed(fn, args.calls))
    # correctness of the chunked form once
    ref = torch.matmul(a.double(), b.double())
    n_chunked([512, 1024, 1280])()
    outs = [torch.ops.myns.matmul(a, bp[:, c0:c1]) for c0, c1 in chunks_of(N, [512, 1024, 1280])]
    err = (torch.cat(outs, 1).double() - ref).abs().max().item()
    print(f"{torch.cuda.get_device_name()}  rounds {args.rounds} x {args.calls} calls; chunked product max abs err vs float64 {err:.3g}")
    flop = 2.0 * M * K * 4096
    for name, ts in res.items():
        med = statistics.median(ts)
        extra = ""
        if "copy" in name and "beside" not in name:
            extra = f"  {2 * K * N * es / med / 1e3:.0f} GB/s (read + write)"
        print(f"{med:9.1f} us  {flop / med / 1e6:6.0f} TFLOP/s-equiv  {name}{extra}   (rounds: {', '.join(f'{t:.1f}' for t in ts)})")


if __name__ == "__main__":
    main()
