"""One decode product for ncu: `python ncu_decode.py myns|torch kn|nk M K N`
(bf16, or DTYPE=tf32: float32 with TF32 allowed; kn: weights w[k][n]
row-major, nk: nn.Linear's w[n][k] used as w.t()).
Runs it 4 times; profile with --launch-skip 2 --launch-count 1 and a kernel
name filter (bench/explore/skinny/ncu_run.sh)."""
import os
import sys

import torch

import myns  # noqa: F401

who, lay, m, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
tf32 = os.environ.get("DTYPE") == "tf32"
dt = torch.float32 if tf32 else torch.bfloat16
torch.backends.cuda.matmul.allow_tf32 = tf32
x = torch.randn(m, k, device="cuda", dtype=dt)
w = torch.randn(k, n, device="cuda", dtype=dt) if lay == "kn" else torch.randn(n, k, device="cuda", dtype=dt).t()
fn = torch.ops.myns.matmul if who == "myns" else torch.matmul
for _ in range(4):
    fn(x, w)
torch.cuda.synchronize()
