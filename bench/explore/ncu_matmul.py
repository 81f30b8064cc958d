"""One product for ncu: `python ncu_matmul.py myns|torch M K N [dtype]`
(dtype bf16, f16 or f32, the last with TF32 off as PyTorch leaves it) runs
it 4 times (profile with --launch-skip 2 --launch-count 1 and a kernel name
filter). Used for the profiles in bench/results/logs and bench/explore
(ncu-*.txt)."""
import sys

import torch

import myns  # noqa: F401

who, m, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[sys.argv[5] if len(sys.argv) > 5 else "bf16"]
a = torch.randn(m, k, device="cuda", dtype=dtype)
b = torch.randn(k, n, device="cuda", dtype=dtype)
fn = torch.ops.myns.matmul if who == "myns" else torch.matmul
for _ in range(4):
    fn(a, b)
torch.cuda.synchronize()
