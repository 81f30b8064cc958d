import os, sys, torch
sys.path.insert(0, "bench/explore")
import myns
from matmul_kernel_times import kernel_times
from matmul_variants import operands
for kind, m, k, n, lay in [("bf16",3000,1000,2000,"kn"),("bf16",3000,4000,2000,"kn"),("bf16",1024,1024,1024,"kn"),("bf16",2048,4096,32000,"nk"),("bf16",4096,4096,4096,"kn")]:
    a, b = operands(kind, 1, m, k, n, lay)
    for r in range(2):
        for store in (None, "off"):
            myns.set_override("MYNS_MATMUL_TMA_STORE", store)
            per = kernel_times(lambda: myns.matmul(a, b), 20)
            t = sum(per.values())
            print(f"{m}x{k}x{n} {lay} tma_store={store or 'auto'}: {t:.1f} us", flush=True)
    myns.set_override("MYNS_MATMUL_TMA_STORE", None)
