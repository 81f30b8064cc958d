"""Cliff hunt: myns.matmul against torch.matmul over LLM weights the report
does not cover, bf16 (--dtype f16), nn.Linear's layout (x @ W^T; --layout kn: x @ W with
W row-major), M from 1 to 4096.

Each row: 3 interleaved rounds of do_bench medians (bench_matmul.bench_pair),
ratio = torch time / myns time, and the worst element's share of its
elementwise bound (bench_matmul.bound_share). Rows print as they finish, so
a run cut short keeps what it measured.

    python bench/explore/cliff-hunt/sweep.py [--ms 1,16,64] [--rounds 3] [--variants auto,wgh144]
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import bench_matmul as bm  # noqa: E402
import myns  # noqa: E402

# (model, K, N) of x @ W^T, W of [N, K].
WEIGHTS = [
    ("llama2-7b up", 4096, 11008),
    ("llama2-7b down", 11008, 4096),
    ("llama2-7b qkv", 4096, 12288),
    ("llama3-8b gate_up", 4096, 28672),
    ("llama3-8b qkv", 4096, 6144),
    ("llama3-70b o", 8192, 8192),
    ("llama3-70b qkv", 8192, 10240),
    ("llama3-70b up", 8192, 28672),
    ("llama3-70b down", 28672, 8192),
    ("qwen2-7b qkv", 3584, 4608),
    ("qwen2-7b o", 3584, 3584),
    ("qwen2-7b down", 18944, 3584),
    ("phi3-mini qkv", 3072, 9216),
    ("phi3-mini gate_up", 3072, 16384),
    ("phi3-mini down", 8192, 3072),
    ("gemma2-9b up", 3584, 14336),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", default="1,16,48,64,96,128,256,512,2048,4096")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="substring of the model names to keep")
    ap.add_argument("--variants", default="", help="forced MYNS_MATMUL_KERNEL values to time beside auto (ratio to cuBLAS; nan: the shape cannot take it)")
    ap.add_argument("--shapes", default="", help="M,K,N;M,K,N;... instead of --ms x WEIGHTS")
    ap.add_argument("--layout", default="nk", choices=["nk", "kn"], help="nk: nn.Linear's W^T (default); kn: a row-major [K, N] weight")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    args = ap.parse_args()
    ms = [int(x) for x in args.ms.split(",")]
    variants = [v for v in args.variants.split(",") if v]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, commit {os.environ.get('MYNS_GIT_COMMIT', '?')}, weights {args.layout}, {args.dtype}")
    print("| model | M x K x N | myns TFLOP/s | torch TFLOP/s | ratio | err/bound (worst of auto and the variants) |" + "".join(f" {v} |" for v in variants))
    print("|---|---|---|---|---|---|" + "---|" * len(variants))
    todo = [(name, m, k, n) for name, k, n in WEIGHTS if not args.only or args.only in name for m in ms]
    if args.shapes:
        todo = [("", *map(int, s.split(","))) for s in args.shapes.split(";")]
    for name, m, k, n in todo:
        a, b = bm.operands(args.dtype, 1, m, k, n, args.layout)
        fns = {"myns": lambda: torch.ops.myns.matmul(a, b), "torch": lambda: torch.matmul(a, b)}
        share, _ = bm.bound_share(torch.ops.myns.matmul(a, b), a, b, args.dtype)
        for v in variants:
            try:
                vshare, _ = bm.bound_share(forced(v, a, b), a, b, args.dtype)
                share = max(share, vshare)
                fns[v] = lambda v=v: forced(v, a, b)
            except Exception as e:  # a variant this shape cannot take
                print(f"<!-- {m}x{k}x{n} {v}: {type(e).__name__}: {str(e)[:120]} -->", flush=True)
        med, _ = bm.bench_pair(fns, args.rounds, 20)
        fl = 2 * m * k * n
        extra = "".join(f" {med['torch'] / med[v]:.3f} |" if v in med else " nan |" for v in variants)
        print(f"| {name} | {m}x{k}x{n} | {fl / med['myns'] / 1e9:.1f} | {fl / med['torch'] / 1e9:.1f} | {med['torch'] / med['myns']:.3f} | {share:.2f} |{extra}", flush=True)
        del a, b

def forced(v, a, b):
    myns.set_override("MYNS_MATMUL_KERNEL", v)
    try:
        return torch.ops.myns.matmul(a, b)
    finally:
        myns.set_override("MYNS_MATMUL_KERNEL", None)


if __name__ == "__main__":
    main()
