"""fused_linear_cross_entropy forward + backward on the Llama step's shape
(8192 x 2048, vocabulary 32000, bf16): the library in MYNS_LIBRARY, and
torch.compile's reference once; medians of do_bench over three rounds.
Run once per library (acc-reduce/run.sh alternates them)."""
import sys
import torch
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
    hid.grad = w.grad = None
    torch.ops.myns.fused_linear_cross_entropy(hid, w, t, -100, "mean").backward()


flce()
torch.cuda.synchronize()
gw = w.grad.double()
# float64 reference gradient of the weight, for the error against it
with torch.no_grad():
    logits = hid.double() @ w.double().T
    p = torch.softmax(logits, -1)
    p[torch.arange(n), t] -= 1
    rw = (p / n).T @ hid.double()
err = (gw - rw).abs()
print(f"grad_weight: max |err| {err.max().item():.3e}, max |err| / max |ref| {(err.max() / rw.abs().max()).item():.3e}, mean |err| {err.mean().item():.3e}")
ms = [do_bench(flce, warmup=5, rep=50) for _ in range(3)]
print(f"{sys.argv[1] if len(sys.argv) > 1 else 'lib'} fwd+bwd: {sorted(ms)[1]:.3f} ms ({', '.join(f'{x:.3f}' for x in ms)})", flush=True)
