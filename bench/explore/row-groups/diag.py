"""One TF32 product per process (a crash leaves the others' results),
with the row groups of attempt.diff (MYNS_MATMUL_ROW_GROUPS auto) and
without (off): which of the register-A kernel's paths run on the device.
Usage: python diag.py [case]"""
import os, subprocess, sys
import torch

CASES = {
    # name: (m, k, n, lda, offset, kernel)
    "aligned-auto": (256, 256, 256, 256, 0, "auto"),
    "aligned-wgr": (256, 256, 256, 256, 0, "wgr"),
    "aligned-wgrh64": (256, 256, 256, 256, 0, "wgrh64"),
    "g1-wgr": (256, 64, 256, 64, 1, "wgr"),
    "g1-wgrh64": (256, 64, 256, 64, 1, "wgrh64"),
    "g4-wgr": (256, 257, 256, 257, 0, "wgr"),
    "g4-wgrh64": (256, 257, 256, 257, 0, "wgrh64"),
    "g2-wgr": (256, 66, 256, 66, 0, "wgr"),
}

if len(sys.argv) > 1:
    import myns
    m, k, n, lda, off, kern = CASES[sys.argv[1]]
    torch.backends.cuda.matmul.allow_tf32 = True
    myns.set_override("MYNS_MATMUL_KERNEL", kern)
    buf = torch.randn(off + m * lda + 4, device="cuda")
    a = buf[off:off + m * lda].view(m, lda)[:, :k]
    b = torch.randn(k, n, device="cuda")
    out = torch.ops.myns.matmul(a, b)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((out.double() - ref).abs() / (a.double().abs() @ b.double().abs())).max().item()
    print(f"{sys.argv[1]}: ok, max rel err {err:.2e}")
else:
    for name in CASES:
        for groups in ("auto", "off"):
            env = dict(os.environ, MYNS_MATMUL_ROW_GROUPS=groups, CUDA_LAUNCH_BLOCKING="1")
            r = subprocess.run([sys.executable, __file__, name], env=env, capture_output=True, text=True, timeout=60)
            last = (r.stdout.strip().splitlines() or [""])[-1] if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1][:150]
            print(f"groups {groups:4} {name:16} rc {r.returncode}: {last}", flush=True)
