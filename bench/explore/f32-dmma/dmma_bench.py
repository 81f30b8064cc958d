"""Exploration: float32 GEMM on the FP64 tensor cores (dmma.cu, a cubin
built here: `nvcc -arch=sm_90 -cubin -O3 -o dmma.cubin dmma.cu`), against
cuBLAS's SGEMM (torch.matmul with TF32 off) and, with MYNS_LIBRARY set,
myns.matmul (its CUDA-core kernel), on squares and Llama shapes whose sizes
are multiples of every tile. Launched through the driver API (ctypes).
Each kernel's result is checked against float64 elementwise: error over
the float32 bound K * 2^-24 * (|a| @ |b|) (<= 1 passes), then timed with
triton's do_bench (L2 flushed), implementations interleaved, medians.

    python3 bench/explore/f32-dmma/dmma_bench.py CUBIN [--rounds 3]
"""

import argparse
import ctypes
import os
import statistics
import sys

import torch
from triton.testing import do_bench

cuda = ctypes.CDLL("libcuda.so.1")
PTR, I64 = ctypes.c_void_p, ctypes.c_int64


class Args(ctypes.Structure):
    _fields_ = [("a", PTR), ("b", PTR), ("c", PTR), ("M", I64), ("N", I64), ("K", I64)]


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUDA driver error {rc}")


VARIANTS = {  # name: (BM, BN, BK, threads, stages)
    "dmma_128x128_k16_w2x4_s4": (128, 128, 16, 256, 4),
    "dmma_128x128_k32_w2x4_s3": (128, 128, 32, 256, 3),
    "dmma_128x64_k16_w2x2_s4": (128, 64, 16, 128, 4),
    "dmma_64x128_k16_w2x2_s4": (64, 128, 16, 128, 4),
    "dmma_128x128_k16_w4x2_s4": (128, 128, 16, 256, 4),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubin")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.empty(1, device="cuda")  # makes the primary context current for the driver calls
    mod = PTR()
    check(cuda.cuModuleLoadData(ctypes.byref(mod), open(args.cubin, "rb").read()), "load")
    fns = {}
    for name, (bm, bn, bk, threads, stages) in VARIANTS.items():
        fn = PTR()
        check(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), name)
        smem = stages * (bm * (bk + 4) + bk * (bn + 8)) * 4
        check(cuda.cuFuncSetAttribute(fn, 8, smem), "smem attr")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        fns[name] = (fn, bm, bn, threads, smem)
    mm = None
    if os.environ.get("MYNS_LIBRARY"):
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python_loader"))
        import myns  # noqa: F401
        mm = torch.ops.myns.matmul

    def launcher(name, a, b, c):
        fn, bm, bn, threads, smem = fns[name]
        M, K = a.shape
        N = b.shape[1]
        p = Args(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K)
        argv = (PTR * 1)(ctypes.addressof(p))
        grid = (M // bm) * (N // bn)

        def run():
            check(cuda.cuLaunchKernel(fn, grid, 1, 1, threads, 1, 1, smem, PTR(torch.cuda.current_stream().cuda_stream), argv, None), name)
            return c
        run.keep = (p, argv)
        return run

    shapes = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 14336), (8192, 14336, 4096), (1024, 1024, 1024)]
    print(torch.cuda.get_device_name(), torch.__version__)
    for M, K, N in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(M, K, device="cuda", generator=g)
        b = torch.randn(K, N, device="cuda", generator=g)
        ref = a.double() @ b.double()
        bound = K * 2.0 ** -24 * (a.abs().double() @ b.abs().double())
        impls = {"cublas": lambda: torch.matmul(a, b)}
        if mm is not None:
            impls["myns"] = lambda: mm(a, b)
        for name in VARIANTS:
            c = torch.empty(M, N, device="cuda")
            impls[name] = launcher(name, a, b, c)
        errs = {}
        for name, f in impls.items():
            out = f()
            torch.cuda.synchronize()
            errs[name] = ((out.double() - ref).abs() / bound).max().item()
        times = {name: [] for name in impls}
        for _ in range(args.rounds):
            for name, f in impls.items():
                times[name].append(do_bench(f, warmup=10, rep=50))
        base = statistics.median(times["cublas"])
        flop = 2 * M * N * K
        for name in impls:
            t = statistics.median(times[name])
            print(f"{M}x{K}x{N} {name:28s} {t * 1e3:9.1f} us {flop / t / 1e9:6.1f} TFLOP/s  vs cuBLAS {base / t:5.3f}  err/bound {errs[name]:.2e}", flush=True)
        del a, b, ref, bound, impls
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
