"""One a_rows8 product per forced Hopper variant (run one variant per process:
a fault kills the CUDA context): python probe.py <variant> [M K N].

Checked against float64 with the tests' elementwise matmul bound
(tests/python/bounds.py `matmul_bound`). The run in probe-h100.txt used an
inline bound, 2 (K + 1) 2^-8 sum_k |a_ik| |b_kj|, looser than that one."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from common import test_checks  # noqa: E402

import myns  # noqa: E402

bounds, _ = test_checks()
v = sys.argv[1]
m, k, n = (int(x) for x in sys.argv[2:5]) if len(sys.argv) > 4 else (128, 1001, 72)
myns.set_override("MYNS_MATMUL_KERNEL", v)
torch.manual_seed(0)
a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
out = torch.ops.myns.matmul(a, b)
torch.cuda.synchronize()
ref = a.double() @ b.double()
bad = (out.double() - ref).abs() > bounds.matmul_bound(a, b, ref)
rows = bad.any(1).nonzero().flatten().tolist()
print(f"{v} {m}x{k}x{n}: {int(bad.sum())} elements out of bound, rows {rows[:20]}")
