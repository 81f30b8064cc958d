"""A Llama training step on myns against HF eager and Liger-Kernel, each also
under torch.compile: tokens per second and peak memory of forward +
backward + AdamW step; per op, forward + backward time and peak memory
against Liger and torch.compile; a training run's loss curve per
implementation beside HF's.

On CUDA: a Llama of about 1B parameters (hidden 2048, 16 layers,
intermediate 8192, 32 heads, 8 KV heads, vocabulary 32000), bf16, sequence
2048. On the CPU (``--quick``): a tiny one, a smoke run.
Implementations are interleaved over rounds (medians reported); each is
built from the same weights and fed the same batches.
"""

from __future__ import annotations

import copy
import statistics
import time

import torch
import torch.nn.functional as F

import myns
from common import rounds, table

EPS = 1e-6

ORDER = 90  # the longest: last
IMPLS = ["hf", "liger", "myns", "myns recompute"]  # the last: myns.patch(model, recompute_mlp=True), eager only


def add_args(p):
    p.add_argument("--llama-budget-s", type=float, default=330.0, help="stop starting new parts after this")
    p.add_argument("--llama-steps", type=int, default=50, help="steps of the loss-curve run")
    p.add_argument("--llama-batch", type=int, default=4)
    p.add_argument("--llama-layers", type=int, default=16)
    p.add_argument("--llama-no-compile", action="store_true")


class Timer:
    def __init__(self, dev):
        self.cuda = dev.startswith("cuda")

    def __call__(self, fn, n=1):
        if self.cuda:
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(n):
                fn()
            b.record()
            torch.cuda.synchronize()
            return a.elapsed_time(b) / n
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) * 1e3 / n

    def peak(self, fn):
        """(bytes above what was allocated before, absolute peak) of one call."""
        if not self.cuda:
            fn()
            return float("nan"), float("nan")
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        return peak - base, peak


# ---------------------------------------------------------------- per op (after Liger-Kernel's own benchmarks)

def _liger_ops():
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
        from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction
        from liger_kernel.ops.geglu import LigerGELUMulFunction
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.rope import LigerRopeFunction
        from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction
    except Exception:
        return {}
    return {
        "rms_norm": lambda x, w: LigerRMSNormFunction.apply(x, w, EPS),
        "add_rms_norm": lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, EPS),
        "swiglu": lambda x: LigerFusedGateUpSiLUMulFunction.apply(x),
        "geglu": lambda x: LigerGELUMulFunction.apply(*x.chunk(2, -1)),
        "rope": lambda q, k, c, s: LigerRopeFunction.apply(q, k, c, s),
        "cross_entropy": lambda lg, t: LigerCrossEntropyFunction.apply(lg, t, None, -100)[0],
        "fused_linear_cross_entropy": lambda h, w, t: LigerFusedLinearCrossEntropyFunction.apply(h, w, t)[0],
        "layer_norm": lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, EPS),
    }


def _rot(x):
    a, b = x.chunk(2, -1)
    return torch.cat((-b, a), -1)


EAGER = {
    "rms_norm": lambda x, w: w * F.rms_norm(x.float(), (x.shape[-1],), None, EPS).to(x.dtype),
    "add_rms_norm": lambda x, r, w: (lambda s: (w * F.rms_norm(s.float(), (s.shape[-1],), None, EPS).to(s.dtype), s))(x + r),
    "swiglu": lambda x: (lambda a, b: F.silu(a) * b)(*x.chunk(2, -1)),
    "geglu": lambda x: (lambda a, b: F.gelu(a, approximate="tanh") * b)(*x.chunk(2, -1)),
    "rope": lambda q, k, c, s: (q * c[:, None] + _rot(q) * s[:, None], k * c[:, None] + _rot(k) * s[:, None]),
    "cross_entropy": lambda lg, t: F.cross_entropy(lg.float(), t),
    "fused_linear_cross_entropy": lambda h, w, t: F.cross_entropy((h @ w.T).float(), t),
    "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS),
}
MYNS = {
    "rms_norm": lambda x, w: torch.ops.myns.rms_norm(x, w, EPS),
    "add_rms_norm": lambda x, r, w: torch.ops.myns.add_rms_norm(x, r, w, EPS),
    "swiglu": lambda x: myns.silu_and_mul(x),
    "geglu": lambda x: myns.gelu_and_mul(x, "tanh"),
    "rope": lambda q, k, c, s: myns.rope(q, k, c, s),
    "cross_entropy": lambda lg, t: myns.cross_entropy(lg, t, -100, "mean"),
    "fused_linear_cross_entropy": lambda h, w, t: myns.fused_linear_cross_entropy(h, w, t, -100, "mean"),
    "layer_norm": lambda x, w, b: myns.layer_norm(x, w, b, EPS),
}
OPS = list(EAGER)


def op_inputs(op, cfg, batch, seq, dev):
    bf = dict(device=dev, dtype=torch.bfloat16)
    n, h, i, v = batch * seq, cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size
    hd = h // cfg.num_attention_heads
    g = lambda *s: torch.randn(*s, **bf).requires_grad_()  # noqa: E731
    t = lambda m: torch.randint(0, v, (m,), device=dev)  # noqa: E731
    if op == "rms_norm":
        return [g(n, h), g(h)]
    if op == "add_rms_norm":
        return [g(n, h), g(n, h), g(h)]
    if op in ("swiglu", "geglu"):
        return [g(n, 2 * i)]
    if op == "rope":
        ang = torch.randn(batch, seq, hd, **bf)
        # HF's layout: [B, H, S, D] views of [B, S, H, D] projections.
        q = torch.randn(batch, seq, cfg.num_attention_heads, hd, **bf).transpose(1, 2).requires_grad_()
        k = torch.randn(batch, seq, cfg.num_key_value_heads, hd, **bf).transpose(1, 2).requires_grad_()
        return [q, k, ang.cos(), ang.sin()]
    if op == "cross_entropy":
        m = max(1, n // 4)
        return [g(m, v), t(m)]
    if op == "fused_linear_cross_entropy":
        return [(torch.randn(n, h, **bf) / h**0.5).requires_grad_(), (torch.randn(v, h, **bf) / h**0.5).requires_grad_(), t(n)]
    if op == "layer_norm":
        return [g(n, h), g(h), g(h)]
    raise KeyError(op)


def fwd_bwd(fn, inputs):
    def f():
        out = fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        torch.autograd.backward([o for o in outs if o.requires_grad], [torch.ones_like(o) for o in outs if o.requires_grad])
        for x in inputs:
            if isinstance(x, torch.Tensor) and x.is_leaf and x.grad is not None:
                x.grad = None
    return f


def phase_ops(args, dev, cfg, batch, seq, notes, deadline):
    timer = Timer(dev)
    liger = _liger_ops() if dev.startswith("cuda") else {}
    records = []
    for op in OPS:
        if time.time() > deadline:
            notes.append(f"ops: budget reached before {op}")
            break
        inputs = op_inputs(op, cfg, batch, seq, dev)
        impls = {"myns": MYNS[op], "eager": EAGER[op]}
        if not args.llama_no_compile:
            impls["compiled"] = torch.compile(EAGER[op])
        if op in liger:
            impls["liger"] = liger[op]
        fns = {}
        for k, fn in impls.items():
            try:
                f = fwd_bwd(fn, inputs)
                f()
                f()
                fns[k] = f
            except Exception as e:
                notes.append(f"ops: {op} {k} failed: {type(e).__name__}: {str(e)[:160]}")
        names = list(fns)
        times = {k: [] for k in names}
        for r in range(rounds(args)):
            for k in names[r % len(names):] + names[: r % len(names)]:
                times[k].append(timer(fns[k], 1 if args.quick else 5))
        rec = {"op": op}
        for k in names:
            rec[f"{k}_ms"] = statistics.median(times[k])
            rec[f"{k}_peak_mb"] = timer.peak(fns[k])[0] / 1e6
        records.append(rec)
        del inputs, fns, impls
    return records


def _config(args, small):
    import transformers

    if small:
        return transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                        attn_implementation="sdpa"), 2, 32
    return transformers.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=8192,
                                    num_hidden_layers=args.llama_layers, num_attention_heads=32,
                                    num_key_value_heads=8, max_position_embeddings=2048,
                                    attn_implementation="sdpa"), args.llama_batch, 2048


def cuda_model(layers, batch, batches=1):
    """The benchmark's CUDA model with `layers` layers (bf16, seed 0), its
    config, the batch and sequence sizes, and `batches` batches of token
    ids (for the scripts in bench/explore)."""
    import argparse

    import transformers

    cfg, batch, seq = _config(argparse.Namespace(llama_layers=layers, llama_batch=batch), False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16)
    g = torch.Generator().manual_seed(0)
    data = [torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).cuda() for _ in range(batches)]
    return model, cfg, batch, seq, data


def _liger_patch(model):
    """Liger-Kernel's full Llama patch (rope, RMSNorm, SwiGLU, fused linear
    cross-entropy) on this model only. Liger rebinds transformers' module
    globals (apply_rotary_pos_emb, the RMSNorm and MLP classes), which would
    also change the HF baseline: they are restored, and Liger's rotary
    embedding is bound to this model's attention layers alone."""
    import types

    import transformers.models.llama.modeling_llama as ml
    from liger_kernel.transformers import apply_liger_kernel_to_llama

    saved = {k: getattr(ml, k) for k in ("apply_rotary_pos_emb", "LlamaRMSNorm", "LlamaMLP")}
    apply_liger_kernel_to_llama(rope=True, cross_entropy=False, fused_linear_cross_entropy=True, rms_norm=True,
                                swiglu=True, model=model)
    liger_rope = ml.apply_rotary_pos_emb
    for k, v in saved.items():
        setattr(ml, k, v)
    fn = ml.LlamaAttention.forward
    fwd = types.FunctionType(fn.__code__, dict(fn.__globals__, apply_rotary_pos_emb=liger_rope), fn.__name__,
                             fn.__defaults__, fn.__closure__)
    for mod in model.modules():
        if isinstance(mod, ml.LlamaAttention):
            mod.forward = types.MethodType(fwd, mod)
    return model


def _build(impl, base, compiled):
    import myns

    m = copy.deepcopy(base)
    if impl == "liger":
        m = _liger_patch(m)
    elif impl == "myns":
        m = myns.patch(m)
    elif impl == "myns recompute":
        m = myns.patch(m, recompute_mlp=True)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
    fwd = torch.compile(m) if compiled else m

    def step(ids):
        loss = fwd(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return m, step


def _time_steps(step, ids, n, sync):
    sync()
    t = time.perf_counter()
    for _ in range(n):
        step(ids)
    sync()
    return (time.perf_counter() - t) / n


def run(args) -> dict:
    t0 = time.time()
    dev = args.device
    cuda = dev.startswith("cuda")
    small = args.quick or not cuda
    notes, failed, records = [], [], []
    try:
        import transformers  # noqa: F401
    except ImportError as e:
        return {"notes": [f"transformers not available: {e}"], "records": [], "tables": [], "seconds": 0.0}
    impls = list(IMPLS)
    if cuda:
        try:
            import liger_kernel.transformers  # noqa: F401
        except Exception as e:
            impls.remove("liger")
            notes.append(f"Liger-Kernel not available ({type(e).__name__}: {str(e)[:100]})")
    else:
        impls.remove("liger")
        notes.append("Liger-Kernel: CUDA only")
    cfg, batch, seq = _config(args, small)
    dtype = torch.bfloat16 if cuda else torch.float32
    torch.manual_seed(0)
    base = transformers.LlamaForCausalLM(cfg).to(device=dev, dtype=dtype)
    params = sum(p.numel() for p in base.parameters())
    tokens = batch * seq
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    g = torch.Generator().manual_seed(0)
    data = [torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).to(dev) for _ in range(4)]
    budget = args.llama_budget_s
    n_rounds = 3
    steps_per = 2 if small else 3

    # 1. Step time and peak memory. A group (eager, then compiled) is built
    # one variant at a time, each one's peak taken above what was allocated
    # before it was built (its weights, gradients, optimizer state and the
    # step's activations); then the group's variants are timed in
    # interleaved rounds (order rotated), medians.
    def measure(group):
        built = {}
        for impl, comp in group:
            name = impl + (" compiled" if comp else "")
            if time.time() - t0 > budget:
                notes.append(f"budget: {name} not measured")
                continue
            try:
                if cuda:
                    torch.cuda.synchronize()
                    base_mem = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                m, step = _build(impl, base, comp)
                for ids in data[:3]:  # warm-up (compiles), and the peak
                    step(ids)
                sync()
                peak[name] = (torch.cuda.max_memory_allocated() - base_mem) / 2**30 if cuda else float("nan")
                built[name] = (m, step)
            except Exception as e:
                notes.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
                failed.append(name)
        names = list(built)
        times = {k: [] for k in names}
        for r in range(n_rounds):
            for k in names[r % max(len(names), 1):] + names[: r % max(len(names), 1)]:
                times[k].append(_time_steps(built[k][1], data[3], steps_per, sync))
        for k in names:
            t = statistics.median(times[k])
            records.append({"what": "step", "impl": k, "step_ms": t * 1e3, "tokens_per_s": tokens / t,
                            "peak_gib": peak[k]})
            print(f"llama step {k:>16}: {t * 1e3:8.1f} ms {tokens / t:9.0f} tok/s peak {peak[k]:.2f} GiB", flush=True)
        built.clear()
        if cuda:
            torch.cuda.empty_cache()

    peak = {}
    measure([(i, False) for i in impls])
    notes.append(f"Step: forward + backward + AdamW step; {steps_per} steps per implementation per round, "
                 f"{n_rounds} interleaved rounds, medians; peak memory: above what was allocated before the "
                 "variant was built (weights, gradients, optimizer state, activations).")

    # 2. Loss curves: the same batches, eager.
    curves = {}
    steps = 5 if small else args.llama_steps
    g = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, cfg.vocab_size, (batch, seq), generator=g) for _ in range(8)]
    for impl in impls:
        if time.time() - t0 > budget:
            notes.append(f"budget: no loss curve for {impl}")
            continue
        torch.manual_seed(0)
        m, step = _build(impl, base, False)
        curve = []
        for i in range(steps):
            curve.append(float(step(batches[i % len(batches)].to(dev))))
        curves[impl] = curve
        del m, step
        if cuda:
            torch.cuda.empty_cache()
    if "hf" in curves:
        for impl, c in curves.items():
            if impl != "hf":
                d = max(abs(a - b) for a, b in zip(c, curves["hf"]))
                records.append({"what": "curve", "impl": impl, "max_abs_diff_vs_hf": d, "final": c[-1],
                                "hf_final": curves["hf"][-1]})
                if not all(x == x for x in c):
                    failed.append(f"{impl}: NaN in the loss curve")

    # 3. Per op, forward + backward on the model's shapes.
    op_recs = []
    if time.time() - t0 < budget:
        op_recs = phase_ops(args, dev, cfg, batch, seq, notes, t0 + budget)
        for r in op_recs:
            r["what"] = "op"
        records.extend(op_recs)

    # 4. The compiled variants last: they take the longest to build.
    if not args.llama_no_compile:
        measure([(i, True) for i in impls if i != "myns recompute"])

    by = {r["impl"]: r for r in records if r["what"] == "step"}
    for base_name in ("hf", "liger", "hf compiled", "liger compiled"):
        for ours in ("myns", "myns recompute", "myns compiled"):
            if base_name in by and ours in by and ("compiled" in base_name) == ("compiled" in ours):
                records.append({"what": "ratio", "impl": f"{ours} vs {base_name}",
                                "speed": by[ours]["tokens_per_s"] / by[base_name]["tokens_per_s"],
                                "memory": by[ours]["peak_gib"] / by[base_name]["peak_gib"] if cuda else float("nan")})
    rows = [[r["impl"], r["step_ms"], r["tokens_per_s"], r["peak_gib"]] for r in records if r["what"] == "step"]
    tabs = [table(f"Training step, Llama {params / 1e9:.2f}B params, {dtype}, batch {batch} x {seq} tokens",
                  ["implementation", "step ms", "tokens/s", "peak GiB"], rows)]
    ratios = [[r["impl"], r["speed"], r["memory"]] for r in records if r["what"] == "ratio"]
    if ratios:
        tabs.append(table("Ratios (speed: tokens/s over the baseline's; memory: peak over the baseline's)",
                          ["comparison", "speed", "peak memory"], ratios))
    cr = [[r["impl"], r["max_abs_diff_vs_hf"], r["final"], r["hf_final"]] for r in records if r["what"] == "curve"]
    if cr:
        tabs.append(table(f"Loss curves over {steps} steps (same weights and batches) against HF",
                          ["implementation", "max |loss - HF loss|", "final loss", "HF final loss"], cr))
    if op_recs:
        impls_ops = [k for k in ("myns", "eager", "compiled", "liger") if any(f"{k}_ms" in r for r in op_recs)]
        tabs.append(table(
            f"Per op, forward + backward on the model's shapes ({batch} x {seq} tokens), ms (median of interleaved "
            "rounds) and peak memory above the inputs, MB; ratio = baseline time / myns time",
            ["op", *[f"{k} ms" for k in impls_ops], *[f"{k} MB" for k in impls_ops],
             *[f"vs {k}" for k in impls_ops if k != "myns"]],
            [[r["op"], *[r.get(f"{k}_ms", float("nan")) for k in impls_ops],
              *[r.get(f"{k}_peak_mb", float("nan")) for k in impls_ops],
              *[r.get(f"{k}_ms", float("nan")) / r["myns_ms"] for k in impls_ops if k != "myns"]] for r in op_recs]))
    kf = {f"{r['impl']} tokens/s": round(r["tokens_per_s"]) for r in records if r["what"] == "step"}
    kf.update({f"{r['impl']} speed": round(r["speed"], 3) for r in records if r["what"] == "ratio"})
    kf.update({f"{r['impl']} peak GiB": round(r["peak_gib"], 3) for r in records
               if r["what"] == "step" and r["peak_gib"] == r["peak_gib"]})
    return {"tables": tabs, "records": records, "curves": curves, "notes": notes, "failed_checks": failed,
            "key_figures": kf, "seconds": time.time() - t0}


def plot(res, path):
    curves = res.get("curves") or {}
    if not curves:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for impl, c in curves.items():
        ax.plot(range(1, len(c) + 1), c, label=impl, linewidth=1.2 if impl == "hf" else 0.9,
                linestyle="-" if impl == "hf" else "--")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("Llama training loss: HF, Liger-Kernel, myns.patch")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
