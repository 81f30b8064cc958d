# float32 skinny kernel (kernels/gemm_skinny.cu skinny_f32) at decode shapes, TF32 off: GB/s of
# the operands under do_bench (L2 flushed), 3 interleaved rounds, median; the automatic choice and
# every cluster size against torch.matmul. On the GPU machine, from the repository root:
#   MYNS_LIBRARY=<libmyns.so> PYTHONPATH=python_loader python3 bench/explore/skinny/f32_variants.py
import os, statistics, torch, myns
print(os.environ["MYNS_LIBRARY"])
from triton.testing import do_bench
torch.backends.cuda.matmul.allow_tf32 = False
rows = []
for m, k, n, lay in [(1, 4096, 4096, "kn"), (16, 4096, 4096, "kn"), (1, 4096, 4096, "nk"), (16, 4096, 4096, "nk"), (1, 4096, 14336, "kn"), (8, 14336, 4096, "nk")]:
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda") if lay == "kn" else torch.randn(n, k, device="cuda").t()
    gb = (m * k + k * n + m * n) * 4 / 1e9
    res = {}
    for r in range(3):
        for v in ["torch", "auto", "skinny/1", "skinny/2", "skinny/4", "skinny/8"]:
            if v == "torch":
                f = lambda: torch.matmul(a, b)
            else:
                myns.set_override("MYNS_MATMUL_KERNEL", v)
                f = lambda: torch.ops.myns.matmul(a, b)
            res.setdefault(v, []).append(do_bench(f, warmup=10, rep=40))
    myns.set_override("MYNS_MATMUL_KERNEL", None)
    print(f"{m}x{k}x{n} {lay}: " + "  ".join(f"{v} {gb / statistics.median(t) * 1e3:.0f}" for v, t in res.items()), flush=True)
