"""Run 21 in bench/results/gpu-runs-2026-11-21.md, on the H100 with the bundle:
OUT=<dir> MYNS_LIBRARY=.gpu/libmyns.so python3 <this file> (writes explore.json).
Exploration (not a shipped benchmark): TF32 products with every forced Hopper
variant (register-A `wgr*`, dual-copy `wg`, mma.sync `nowg`), ratio to
torch.matmul and relative error against float64."""
import os, sys, json, torch
import torch.nn.functional as F
from triton.testing import do_bench
sys.path.insert(0, "python_loader")
import myns
out = {}
def bench(fn):
    return do_bench(fn, warmup=10, rep=40, return_mode="median")
def mm(kind, shapes, variants):
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    for m, k, n in shapes:
        a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
        ref = a.double() @ b.double()
        tt = bench(lambda: torch.matmul(a, b))
        row = {}
        for v in variants:
            os.environ["MYNS_MATMUL_KERNEL"] = v
            c = myns.matmul(a, b)
            err = ((c.double() - ref).norm() / ref.norm()).item()
            t = bench(lambda: myns.matmul(a, b))
            row[v] = (round(tt / t, 3), f"{err:.1e}")
        os.environ.pop("MYNS_MATMUL_KERNEL")
        print(kind, f"{m}x{k}x{n}", "torch %.1f TF" % (2*m*n*k/tt/1e9), row, flush=True)
        out[f"{kind} {m}x{k}x{n}"] = row
tf = [(128, 4096, 4096), (128, 4096, 14336), (128, 14336, 4096), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
      (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (64, 4096, 4096), (32, 4096, 4096)]
mm("tf32", tf, ["auto", "wgr", "wgr256", "wgr128", "wgr64", "wgr128/2", "wgr128/4", "wgr64/2", "wg", "nowg"])
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "explore.json"), "w"), indent=1)
