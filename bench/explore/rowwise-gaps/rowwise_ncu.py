"""Exploration: ncu of the row kernels where myns trails the best baseline
(bench/explore/rowwise-gaps/rowwise_gaps.py): myns forced builds, Liger and compiled on
the same inputs, two calls each inside an NVTX range "prof" (compilation
and autotuning stay outside it). Run under ncu (bench/explore/rowwise-gaps/rowwise_gaps.sh):

    ncu --nvtx --nvtx-include "prof/" --section ... python3 bench/explore/rowwise-gaps/rowwise_ncu.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import bench_rowwise as br  # noqa: E402

import myns  # noqa: E402

CASES = [("softmax", 1024, 8192, ["r2:512", "general:256"]), ("rms_norm", 1024, 8192, ["r2:512"]),
         ("fused_add_rms_norm", 2048, 2048, ["r2:128"])]
liger, _ = br._liger()
for op, rows, hidden, forced in CASES:
    torch._dynamo.reset()
    _, make, _, impls = br.spec(op, rows, hidden, torch.bfloat16, "cuda", "max-autotune-no-cudagraphs", liger)
    ins = make()
    runs = {f"myns {v}": (v, impls["myns"]) for v in forced}
    runs.update({k: (None, impls[k]) for k in ("compiled", "liger") if k in impls})
    with torch.no_grad():
        for name, (v, fn) in runs.items():
            myns.set_override("MYNS_ROW_KERNEL", v)
            for _ in range(3):
                fn(*ins)  # warm-up, compilation
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("prof")
            torch.cuda.nvtx.range_push(f"{op} {rows}x{hidden} {name}")
            for _ in range(2):
                fn(*ins)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            torch.cuda.nvtx.range_pop()
            myns.set_override("MYNS_ROW_KERNEL", None)
    print(op, rows, hidden, "done", flush=True)
