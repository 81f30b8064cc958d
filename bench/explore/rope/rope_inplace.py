"""Exploration (not a shipped benchmark), on the H100: is Liger-Kernel's lead
over `myns.rope` in the row-op report (0.93 at 42 and 88 MB) its kernel or
its in-place writes?

Times, as bench_rowwise.py does (common.graph_times: CUDA graphs of N calls
over input sets covering twice L2, outputs rotating with the inputs,
interleaved rounds, medians):
- `myns`: the library's rope (new outputs);
- `ours oop` / `ours inplace`: kernels/rope.cu's cubin launched through the
  driver API with new outputs, or writing over q and k;
- `flat oop` / `flat inplace`: rope_flat.cu (one thread per token, head and
  pack; no loops, 40 registers against the library kernel's 64), likewise;
- `liger inplace`: Liger-Kernel's rope (it rotates q and k in place);
- `liger oop`: Liger's triton kernel, as in liger_kernel/ops/rope.py 0.8.5,
  but storing to new outputs (written out below);
- `liger oop 2h`: that, reading both halves of cos and sin as myns does
  (Liger reads the first halves only: it assumes cos = cat(f, f)).
Every variant is checked against a float64 reference first.

    OUT=<dir> MYNS_LIBRARY=... PYTHONPATH=<liger>:python_loader \\
        python3 bench/explore/rope/rope_inplace.py --cubins DIR [--rounds 7]
(DIR: base.cubin from rope_variants.sh, flat.cubin from rope_flat.cu built the
same way.)
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import myns  # noqa: E402
from common import graph_times  # noqa: E402
import ctypes  # noqa: E402
from rope_variants import PTR, RopeParams, check, cuda, function, launch, lanes_shape, make, reference  # noqa: E402


@triton.jit
def _rope_oop(q_ptr, q_rs, k_ptr, k_rs, oq_ptr, ok_ptr, cos, sin, cos_rs, sl, cos_bs: tl.constexpr,
              n_qh: tl.constexpr, n_kh: tl.constexpr, hd: tl.constexpr, pad_qh: tl.constexpr,
              pad_kh: tl.constexpr, both_halves: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    q_ptr += pid * q_rs
    k_ptr += pid * k_rs
    oq_ptr += pid * q_rs
    ok_ptr += pid * k_rs
    row = pid % sl if cos_bs == 1 else pid
    cos += row * cos_rs
    sin += row * cos_rs
    d = tl.arange(0, hd // 2)
    c1 = tl.load(cos + d)
    s1 = tl.load(sin + d)
    if both_halves:
        c2 = tl.load(cos + d + hd // 2)
        s2 = tl.load(sin + d + hd // 2)
    else:
        c2, s2 = c1, s1
    qo = tl.arange(0, pad_qh)[:, None] * hd + d[None, :]
    ko = tl.arange(0, pad_kh)[:, None] * hd + d[None, :]
    qm = tl.arange(0, pad_qh)[:, None] < n_qh
    km = tl.arange(0, pad_kh)[:, None] < n_kh
    q1 = tl.load(q_ptr + qo, mask=qm, other=0).to(tl.float32)
    k1 = tl.load(k_ptr + ko, mask=km, other=0).to(tl.float32)
    q2 = tl.load(q_ptr + qo + hd // 2, mask=qm, other=0).to(tl.float32)
    k2 = tl.load(k_ptr + ko + hd // 2, mask=km, other=0).to(tl.float32)
    tl.store(oq_ptr + qo, q1 * c1 - q2 * s1, mask=qm)
    tl.store(oq_ptr + qo + hd // 2, q2 * c2 + q1 * s2, mask=qm)
    tl.store(ok_ptr + ko, k1 * c1 - k2 * s1, mask=km)
    tl.store(ok_ptr + ko + hd // 2, k2 * c2 + k1 * s2, mask=km)


def liger_oop(both):
    def run(q, k, c, s):
        B, hq, S, D = q.shape
        hk = k.shape[1]
        oq, ok = torch.empty_like(q), torch.empty_like(k)
        # q is a transposed view of [B, S, H, D]: token rows of H * D.
        _rope_oop[(B * S,)](q, q.stride(2), k, k.stride(2), oq, ok, c, s, c.stride(-2), S, c.shape[0], hq, hk, D,
                            triton.next_power_of_2(hq), triton.next_power_of_2(hk), both)
        return oq, ok
    return run


def ours(fn, inplace, flat=False, tok_block=0, new=False):
    def run(q, k, c, s):
        B, hq, S, D = q.shape
        hk = k.shape[1]
        heads, pairs, tokens = hq + hk, D // 2 // 8, B * S
        oq, ok = (q, k) if inplace else (torch.empty_like(q), torch.empty_like(k))
        bx, lanes, per_block = lanes_shape(pairs, heads, 1)
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
        if new:  # kernels/rope.cu as of this script's commit: src/ops/rope.rs's launch (lanes = groups)
            most = max(256 // bx, 1)
            groups = math.ceil(heads / most)
            by = math.ceil(heads / groups)
            bz = min(max(most // by, 1), 64)
            p.lanes = groups
            launch3(fn, (math.ceil(tokens / bz) * groups, math.ceil(pairs / bx), 1), (bx, by, bz), p)
        elif flat:  # rope_flat.cu: grid (tokens, head groups, packs / bx), no loops
            groups = math.ceil(heads / max(256 // bx, 1))
            hb = math.ceil(heads / groups)
            if flat == "linear":  # one grid dimension of (token, group), the group fastest
                p.lanes = groups
                launch3(fn, (tokens * groups, 1, math.ceil(pairs / bx)), (bx, hb), p)
            else:
                launch3(fn, (tokens, groups, math.ceil(pairs / bx)), (bx, hb), p)
        elif tok_block:  # rope_tok: a block per token, its head slots over every head
            most = max(tok_block // bx, 1)
            ny = math.ceil(heads / math.ceil(heads / most))
            launch3(fn, (min(tokens, 2**31 - 1), 1, math.ceil(pairs / bx)), (bx, ny), p)
        else:
            launch(fn, (math.ceil(pairs / bx), min(math.ceil(tokens / per_block), 65535)), (bx, lanes * per_block), p)
        return oq, ok
    return run


def launch3(fn, grid, block, params):
    args = (PTR * 1)(ctypes.addressof(params))
    stream = PTR(torch.cuda.current_stream().cuda_stream)
    bz = block[2] if len(block) > 2 else 1
    check(cuda.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], bz, 0, stream, args, None), "launch")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubins", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")
    base = function(f"{a.cubins}/base.cubin", "rope_vec_bf16")
    flat = function(f"{a.cubins}/flat.cubin", "rope_flat")
    flat2 = function(f"{a.cubins}/flat.cubin", "rope_flat2")
    tok1 = function(f"{a.cubins}/flat.cubin", "rope_tok1")
    new = function(f"{a.cubins}/new.cubin", "rope_vec_bf16") if os.path.exists(f"{a.cubins}/new.cubin") else None
    from liger_kernel.ops.rope import LigerRopeFunction
    impls = {
        "myns": lambda q, k, c, s: tuple(myns.rope(q, k, c, s)),
        "ours oop": ours(base, False),
        "ours inplace": ours(base, True),
        "flat oop": ours(flat, False, True),
        "flat inplace": ours(flat, True, True),
        "flat2 oop": ours(flat2, False, "linear"),
        "tok1 256": ours(tok1, False, tok_block=256),
        "tok1 128": ours(tok1, False, tok_block=128),
        "liger inplace": lambda q, k, c, s: tuple(LigerRopeFunction.apply(q, k, c, s)),
        "liger oop": liger_oop(False),
        "liger oop 2h": liger_oop(True),
    }
    if new is not None:
        impls["new cubin"] = ours(new, False, new=True)
    inplace = {"ours inplace", "liger inplace", "flat inplace"}
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    results = []
    for (B, S, hq, hk, D) in [(1, 1024, 64, 16, 128), (1, 8192, 16, 4, 128), (1, 8192, 64, 16, 128), (4, 2048, 32, 8, 128)]:
        first = make(B, S, hq, hk, D)
        nbytes = 2 * sum(t.numel() * 2 for t in first[:2]) + 2 * first[2].numel() * 2
        in_bytes = sum(t.numel() * t.element_size() for t in first)
        sets = [first] + [make(B, S, hq, hk, D) for _ in range(max(0, min(16, math.ceil(2 * l2 / in_bytes)) - 1))]
        print(f"\nB={B} S={S} Hq={hq} Hk={hk} D={D} ({nbytes / 1e6:.1f} MB, {len(sets)} input sets)", flush=True)
        ref = reference(*first)
        for name, fn in impls.items():
            got = fn(*[t.clone() for t in first])
            # Elementwise: |got - ref| <= 2^-8 |ref| + 2^-8 (|x c| + |x' s|) covers bf16's output rounding.
            scale = [(x.double().abs() * first[2].double().abs().unsqueeze(1)).amax(-1, keepdim=True) * 2 + 1e-30
                     for x in first[:2]]
            bad = max(((g.double() - r).abs() / (2 ** -8 * r.abs() + 2 ** -7 * sc)).max().item()
                      for g, r, sc in zip(got, ref, scale))
            print(f"  {name:>14}: worst error / bound {bad:.3f}")
            assert bad <= 1, name
        calls = {n: (lambda i, fn=fn: fn(*sets[i % len(sets)])) for n, fn in impls.items()}
        n_calls = int(max(2, min(128, 1000 / max(3.0, nbytes / 2.5e6))))
        with torch.no_grad():
            times = graph_times(calls, n_calls, a.rounds, keep=len(sets))
        med = {k: statistics.median(v) for k, v in times.items()}
        for k in sorted(med, key=med.get):
            tag = " (in place)" if k in inplace else ""
            print(f"  {k:>14} {med[k]:8.2f} us  {nbytes / med[k] / 1e6:5.2f} TB/s  liger inplace / this "
                  f"{med['liger inplace'] / med[k]:.3f}  myns / this {med['myns'] / med[k]:.3f}{tag}")
        results.append({"shape": [B, S, hq, hk, D], "bytes": nbytes, "graph_calls": n_calls, "rounds_us": times, "us": med})
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "rope-inplace.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
