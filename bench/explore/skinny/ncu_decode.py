"""One decode product for ncu: `python ncu_decode.py myns|torch kn|nk M K N`
(bf16; kn: weights w[k][n] row-major, nk: nn.Linear's w[n][k] used as w.t()).
Runs it 4 times; profile with --launch-skip 2 --launch-count 1 and a kernel
name filter (bench/explore/skinny/ncu_run.sh)."""
import sys

import torch

import myns  # noqa: F401

who, lay, m, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if lay == "kn" else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
fn = torch.ops.myns.matmul if who == "myns" else torch.matmul
for _ in range(4):
    fn(x, w)
torch.cuda.synchronize()
