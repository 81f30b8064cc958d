"""One product per process (argv: M K N [a-layout n|t]); prints ok or the error."""
import sys, torch, myns  # noqa: F401
m, k, n = map(int, sys.argv[1:4])
a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
if len(sys.argv) > 4 and sys.argv[4] == "t":
    a = a.t().contiguous().t()
b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
try:
    c = torch.ops.myns.matmul(a, b)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    print(sys.argv[1:], "ok", float((c.double() - ref).abs().max()))
except Exception as e:
    print(sys.argv[1:], "ERR", str(e).splitlines()[0])
