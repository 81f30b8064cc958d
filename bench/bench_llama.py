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
import time

import torch

from common import table

ORDER = 90  # the longest: last
IMPLS = ["hf", "liger", "myns"]


def add_args(p):
    p.add_argument("--llama-budget-s", type=float, default=330.0, help="stop starting new parts after this")
    p.add_argument("--llama-steps", type=int, default=50, help="steps of the loss-curve run")
    p.add_argument("--llama-batch", type=int, default=4)
    p.add_argument("--llama-layers", type=int, default=16)
    p.add_argument("--llama-no-compile", action="store_true")


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
    variants = [(i, False) for i in impls] + ([] if args.llama_no_compile else [(i, True) for i in impls])
    n_rounds = 3
    steps_per = 2 if small else 3

    # 1. Step time and peak memory, one variant at a time (peak memory needs
    # the GPU to itself), then interleaved rounds over the built variants.
    built, peak = {}, {}
    for impl, comp in variants:
        name = impl + (" compiled" if comp else "")
        if time.time() - t0 > budget * 0.6:
            notes.append(f"budget: {name} not measured")
            continue
        try:
            if cuda:
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            m, step = _build(impl, base, comp)
            for ids in data[:2]:  # warm-up (compiles)
                step(ids)
            sync()
            if cuda:
                torch.cuda.reset_peak_memory_stats()
                before = torch.cuda.memory_allocated()
            step(data[2])
            sync()
            peak[name] = (torch.cuda.max_memory_allocated() - 0) / 2**30 if cuda else float("nan")
            built[name] = (m, step)
            if cuda:  # keep one variant's state on the GPU at a time
                del before
        except Exception as e:
            notes.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            failed.append(name)
            continue
        times = []
        for _ in range(n_rounds):
            times.append(_time_steps(step, data[3], steps_per, sync))
        times.sort()
        records.append({"what": "step", "impl": name, "step_ms": times[len(times) // 2] * 1e3,
                        "tokens_per_s": tokens / times[len(times) // 2], "peak_gib": peak[name]})
        print(f"llama step {name:>16}: {records[-1]['step_ms']:8.1f} ms {records[-1]['tokens_per_s']:9.0f} tok/s "
              f"peak {peak[name]:.2f} GiB", flush=True)
        del built[name], m, step
        if cuda:
            torch.cuda.empty_cache()
    notes.append("Step: forward + backward + AdamW step, median of 3 rounds of "
                 f"{steps_per} steps per implementation (each measured on its own for its peak memory).")
    by = {r["impl"]: r for r in records if r["what"] == "step"}
    for base_name in ("hf", "liger", "hf compiled", "liger compiled"):
        for ours in ("myns", "myns compiled"):
            if base_name in by and ours in by and ("compiled" in base_name) == ("compiled" in ours):
                records.append({"what": "ratio", "impl": f"{ours} vs {base_name}",
                                "speed": by[ours]["tokens_per_s"] / by[base_name]["tokens_per_s"],
                                "memory": by[ours]["peak_gib"] / by[base_name]["peak_gib"] if cuda else float("nan")})

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
    kf = {f"{r['impl']} tokens/s": round(r["tokens_per_s"]) for r in records if r["what"] == "step"}
    kf.update({f"{r['impl']} speed": round(r["speed"], 3) for r in records if r["what"] == "ratio"})
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
