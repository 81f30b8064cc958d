"""The main job: load myns, check matmul and add against torch on CUDA (if
present) or CPU, train a tiny model made of myns ops under
torch.compile(fullgraph=True), and print a summary table."""

import time

import torch
import torch._dynamo

import myns

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"myns {myns.__version__} from {myns.library_path()}")
print(f"torch {torch.__version__}, device: {torch.cuda.get_device_name() if device == 'cuda' else 'cpu'}\n")

rows = []
for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    a = torch.randn(129, 257, device=device, dtype=dtype)
    b = torch.randn(257, 65, device=device, dtype=dtype)
    ref = a.double() @ b.double()
    err = ((myns.matmul(a, b).double() - ref).norm() / ref.norm()).item()
    rows.append(("matmul", device, str(dtype).removeprefix("torch."), f"{err:.2e} (rel. norm)", "-"))
    x, y = torch.randn(1000, device=device, dtype=dtype), torch.randn(1000, device=device, dtype=dtype)
    err = (myns.add(x, y) - (x + y)).abs().max().item()
    rows.append(("add", device, str(dtype).removeprefix("torch."), f"{err:.2e} (max abs)", "-"))


class TinyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(16, 64) / 4)
        self.b1 = torch.nn.Parameter(torch.zeros(64))
        self.w2 = torch.nn.Parameter(torch.randn(64, 1) / 8)

    def forward(self, x):
        h = myns.add(myns.matmul(x, self.w1), self.b1.expand(x.shape[0], -1))
        return myns.matmul(torch.tanh(h), self.w2)


torch.manual_seed(0)
model = TinyMLP().to(device)
x = torch.randn(256, 16, device=device)
target = x.sin().sum(dim=1, keepdim=True)
breaks = torch._dynamo.explain(model)(x).graph_break_count
compiled = torch.compile(model, fullgraph=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
t0 = time.perf_counter()
losses = []
for step in range(30):
    opt.zero_grad()
    loss = (compiled(x) - target).square().mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
dt = time.perf_counter() - t0
eager_err = (compiled(x) - model(x)).abs().max().item()
rows.append(("TinyMLP (compiled)", device, "float32", f"{eager_err:.2e} (vs eager)", str(breaks)))
print(f"trained 30 steps under torch.compile(fullgraph=True) in {dt:.1f}s (incl. compile): "
      f"loss {losses[0]:.4f} -> {losses[-1]:.4f}\n")

header = ("op", "device", "dtype", "max error", "graph breaks")
widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
fmt = "| " + " | ".join(f"{{:<{w}}}" for w in widths) + " |"
print(fmt.format(*header))
print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
for r in rows:
    print(fmt.format(*r))
assert losses[-1] < losses[0] and breaks == 0
