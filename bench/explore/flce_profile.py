"""Where fused_linear_cross_entropy's time goes on the Llama step's shape
(8192 tokens, hidden 2048, vocab 32000, bf16): the kernels of one forward +
backward under torch.profiler, and each GEMM layout the op runs timed alone
against torch.matmul. Run on the GPU machine with the bundle's library
(MYNS_LIBRARY) as bench/explore/flce_profile.sh does."""
import torch, sys
import torch.nn.functional as F
from triton.testing import do_bench
import myns

torch.manual_seed(0)
n, h, v = 8192, 2048, 32000
dt = torch.bfloat16
hid = (torch.randn(n, h, device="cuda") * 0.5).to(dt).requires_grad_()
w = (torch.randn(v, h, device="cuda") * 0.02).to(dt).requires_grad_()
t = torch.randint(0, v, (n,), device="cuda")

def flce():
    loss = torch.ops.myns.fused_linear_cross_entropy(hid, w, t, -100, "mean")
    loss.backward()

def ref():
    loss = F.cross_entropy((hid @ w.T).float(), t)
    loss.backward()

cref = torch.compile(ref)
for f in (flce, ref, cref):
    f()
torch.cuda.synchronize()
for name, f in [("myns", flce), ("eager", ref), ("compiled", cref)]:
    ms = [do_bench(f, warmup=5, rep=50) for _ in range(3)]
    print(f"{name} fwd+bwd: {sorted(ms)[1]:.2f} ms", flush=True)

with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        flce()
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=90))

c = 1024
hc = hid.detach()[:c].contiguous()
d = torch.randn(c, v, device="cuda").to(dt) * 1e-4
wd = w.detach()
cases = {
    "logits  hc @ w.T  [1024,2048]x[2048,32000]": (hc, wd.T),
    "grad_h  d @ w     [1024,32000]x[32000,2048]": (d, wd),
    "grad_w  d.T @ hc  [32000,1024]x[1024,2048]": (d.T, hc),
    "grad_w  full      [32000,8192]x[8192,2048]": (torch.randn(n, v, device="cuda").to(dt).T, hid.detach()),
}
for name, (a, b) in cases.items():
    rs = []
    for _ in range(3):
        tm = do_bench(lambda: torch.ops.myns.matmul(a, b), warmup=5, rep=40)
        tc = do_bench(lambda: torch.matmul(a, b), warmup=5, rep=40)
        rs.append((tm, tc))
    tm = sorted(r[0] for r in rs)[1]; tc = sorted(r[1] for r in rs)[1]
    fl = 2 * a.shape[0] * a.shape[1] * b.shape[1]
    print(f"{name}: myns {tm*1e3:.0f} us ({fl/tm/1e9:.0f} TFLOP/s), cuBLAS {tc*1e3:.0f} us ({fl/tc/1e9:.0f})", flush=True)
x = torch.randn(c, v, device="cuda").to(dt)
tt = t[:c]
g = torch.ones((), device="cuda", dtype=x.dtype)  # the op wants the loss gradient in the logits dtype
print("cross_entropy fwd [1024,32000]:", round(do_bench(lambda: torch.ops.myns.cross_entropy(x, tt, -100, "mean")) * 1e3), "us")
print("cross_entropy bwd [1024,32000]:", round(do_bench(lambda: torch.ops.myns.cross_entropy_backward(g, x, tt, -100, "mean")) * 1e3), "us")
