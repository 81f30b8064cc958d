"""Every element of myns.matmul under a forced kernel (MYNS_MATMUL_KERNEL)
against float64, bound 2^-8-ish scaled by K (bf16 output rounding plus
the f32 sum): prints the worst ratio error / bound per shape."""
import sys, torch, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import myns
variant = sys.argv[1]
myns.set_override("MYNS_MATMUL_KERNEL", variant)
torch.manual_seed(0)
bad = 0
for (m, k, n, lay) in [(1024, 1024, 1024, "kn"), (1024, 1024, 1024, "nk"), (1000, 1000, 1000, "kn"), (1000, 1000, 1000, "nk"),
                       (512, 512, 576, "kn"), (300, 200, 700, "nk"), (2048, 1024, 960, "kn"), (1024, 2048, 1088, "nk"),
                       (4096, 4096, 4096, "nk"), (128, 64, 64, "kn"), (256, 4096, 192, "nk")]:
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(k, n, device="cuda").bfloat16() if lay == "kn" else torch.randn(n, k, device="cuda").bfloat16().t()
    try:
        c = myns.matmul(a, b)
    except RuntimeError as e:
        print(f"{m}x{k}x{n} {lay}: {str(e).splitlines()[0][:100]}"); continue
    ref = a.double() @ b.double()
    u = 2.0 ** -8
    bound = u * ref.abs() + (k * 2.0 ** -23 * 1.1 + 1e-6) * (a.double().abs() @ b.double().abs())
    r = ((c.double() - ref).abs() / bound).max().item()
    bad += r > 1
    print(f"{m}x{k}x{n} {lay}: worst error/bound {r:.3f} {'FAIL' if r > 1 else 'ok'}")
print("failures", bad)
