import sys, torch
sys.path.insert(0, "python_loader")
import myns
from triton.testing import do_bench
torch.backends.cuda.matmul.allow_tf32 = True
a = torch.randn(4096, 4096, device="cuda"); b = torch.randn(4096, 4096, device="cuda")
for rep in range(3):
    tt = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="median")
    tm = do_bench(lambda: myns.matmul(a, b), warmup=25, rep=100, return_mode="median")
    tc = do_bench(lambda: a.clone(), warmup=25, rep=100, return_mode="median")
    print(f"round {rep}: torch {tt*1e3:.1f} us, myns {tm*1e3:.1f} us (ratio {tt/tm:.3f}), a.clone() {tc*1e3:.1f} us "
          f"= the bytes of myns's rounding copy of a; ratio without it {tt/(tm-tc):.3f}")
