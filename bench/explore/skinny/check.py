"""Correctness of a skinny build (old.so / new.so from build.sh) on the H100
against float64: both weight layouts, aligned rows (16-byte loads) and not
(element loads), M 1..16, K and N tails, clusters of 1 to 8, beta = 1.

  python3 bench/explore/skinny/check.py --build DIR [--libs old,new]
"""
import argparse
import itertools
import math
import random
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from bench import Lib  # noqa: E402


def one(lib, lay, aligned, m, k, n, ranks, beta, gen):
    kp = -(-k // 8) * 8
    x = torch.randn(m, kp, device="cuda", dtype=torch.bfloat16, generator=gen)[:, :k]  # aligned rows (the library stages x so)
    if lay == "nk":
        ks = k if aligned else k + 1
        w = torch.randn(n, ks, device="cuda", dtype=torch.bfloat16, generator=gen)[:, :k]
        wmat, w_k = w.t(), True
        vec = aligned and k % 8 == 0
    else:
        ns = n if aligned else n + 1
        w = torch.randn(k, ns, device="cuda", dtype=torch.bfloat16, generator=gen)[:, :n]
        wmat, w_k = w, False
        vec = aligned and n % 8 == 0
    c0 = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=gen)
    out = c0.clone() if beta else torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    lib.fn(x, w, out, w_k, ranks, beta=beta, vec=vec)()
    torch.cuda.synchronize()
    xd, wd = x.double(), wmat.double()
    ref = xd @ wd + (c0.double() if beta else 0)
    mag = xd.abs() @ wd.abs() + (c0.double().abs() if beta else 0)
    bound = 2 * (2.0**-24 * math.sqrt(k) + 2.0**-24) * mag + 2.0**-8 * ref.abs() * 1.001 + 1e-30
    if not torch.isfinite(out).all():
        return float("inf")
    return ((out.double() - ref).abs() / bound).max().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--libs", default="old,new")
    args = ap.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(1)
    rnd = random.Random(1)
    cases = list(itertools.product(["kn", "nk"], [True, False], [1, 3, 8, 9, 16], [1, 31, 100, 1000, 4104], [1, 63, 64, 100, 1000],
                                   [1, 2, 4, 8], [0, 1]))
    rnd.shuffle(cases)
    cases = cases[:400]
    bad = 0
    for name in args.libs.split(","):
        tma = name.startswith("tma_")
        lib = Lib(f"{args.build}/{name}.so", 8, kalign=64 if tma else 32)
        worst, count = 0.0, 0
        for lay, al, m, k, n, r, beta in cases:
            if tma and not (al and (k if lay == "nk" else n) % 8 == 0):
                continue  # TMA builds take 16-byte aligned rows only
            e = one(lib, lay, al, m, k, n, r, beta, gen)
            if e is None:
                continue
            count += 1
            worst = max(worst, e)
            if not e <= 1:
                bad += 1
                print(f"FAIL {name} {lay} {'vec' if al else 'elem'} M{m} K{k} N{n} ranks {r} beta {beta}: err/bound {e}")
        print(f"{name}: {count} cases, worst err/bound {worst:.3f}", flush=True)
    print("check:", "FAIL" if bad else "ok", flush=True)


if __name__ == "__main__":
    main()
