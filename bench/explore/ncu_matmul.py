"""One product for ncu: `python ncu_matmul.py myns|torch M K N [dtype [batch [layout]]]`
(dtype bf16, f16, f32 (TF32 off, as PyTorch leaves it) or tf32; batch > 1:
bmm of that many products; layout kn (b row-major, the default) or nk
(b the transpose of a row-major [N, K]: nn.Linear's weight)) runs it 4 times (profile with --launch-skip 2 --launch-count 1 and a kernel name
filter). Used for the profiles in bench/results/logs and bench/explore
(ncu-*.txt)."""
import sys

import torch

import myns  # noqa: F401

who, m, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
kind = sys.argv[5] if len(sys.argv) > 5 else "bf16"
batch = int(sys.argv[6]) if len(sys.argv) > 6 else 1
layout = sys.argv[7] if len(sys.argv) > 7 else "kn"
dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "tf32": torch.float32}[kind]
torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
lead = (batch,) if batch > 1 else ()
a = torch.randn(*lead, m, k, device="cuda", dtype=dtype)
b = torch.randn(*lead, k, n, device="cuda", dtype=dtype) if layout == "kn" else torch.randn(*lead, n, k, device="cuda", dtype=dtype).transpose(-1, -2)
if batch > 1:
    fn = torch.ops.myns.bmm if who == "myns" else torch.bmm
else:
    fn = torch.ops.myns.matmul if who == "myns" else torch.matmul
for _ in range(4):
    fn(a, b)
torch.cuda.synchronize()
