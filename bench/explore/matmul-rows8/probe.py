"""One a_rows8 product per forced Hopper variant (run one variant per process:
a fault kills the CUDA context): python probe.py <variant> [M K N]."""
import sys

import torch

import myns

v = sys.argv[1]
m, k, n = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (128, 1001, 72)
myns.set_override("MYNS_MATMUL_KERNEL", v)
torch.manual_seed(0)
a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
out = torch.ops.myns.matmul(a, b)
torch.cuda.synchronize()
ref = a.double() @ b.double()
err = (out.double() - ref).abs()
bound = 2 * (k * 2**-8 + 2**-8) * (a.double().abs() @ b.double().abs())
bad = (err > bound)
rows = bad.any(1).nonzero().flatten().tolist()
print(f"{v} {m}x{k}x{n}: {int(bad.sum())} elements out of bound, rows {rows[:20]}")
