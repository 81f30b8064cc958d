"""Does cuBLAS (torch.matmul with TF32 allowed) round each operand to TF32
to nearest, or truncate it? K terms x / K with x = 1 + 3 * 2^-12, between
the TF32 neighbours 1 and 1 + 2^-10 and nearer the upper: every output is
1 + 2^-10 if x is rounded to nearest, 1 if truncated. x in a or in b, both
layouts of each, over shapes that pick different cuBLAS kernels."""
import torch
from torch.profiler import ProfilerActivity, profile

torch.backends.cuda.matmul.allow_tf32 = True
x = 1 + 3 * 2.0**-12
for (m, k, n) in [(256, 64, 320), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (128, 4096, 4096), (1, 4096, 4096)]:
    for x_in in ("a", "b"):
        for lay in ("nn", "nt", "tn"):
            w = 1.0 / k  # a power of two: k terms x * w sum to x exactly
            a = torch.full((m, k), x if x_in == "a" else w, device="cuda")
            b = torch.full((k, n), w if x_in == "a" else x, device="cuda")
            if lay[0] == "t":
                a = a.t().contiguous().t()
            if lay[1] == "t":
                b = b.t().contiguous().t()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                out = a @ b
                torch.cuda.synchronize()
            names = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
            v = out.float().flatten()
            up = 1 + 2.0**-10
            print(f"{m}x{k}x{n} x in {x_in} {lay}: rounded {int((v == up).sum())}/{v.numel()} truncated {int((v == 1).sum())} other {int(((v != 1) & (v != up)).sum())}  {names[0][:70] if names else ''}")
