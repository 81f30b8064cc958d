"""myns.nn layers and myns.patch on tiny transformers Llama, Mistral and
Qwen2 models (random weights): outputs, loss and gradients against a float64
copy of the unpatched model, torch.compile(fullgraph=True), autocast, errors.

End-to-end bound: a whole model has no closed-form elementwise error bound,
so each element of the patched model's output must be within
``FACTOR x`` the unpatched HF model's own error (same dtype) on that row
against the float64 reference, plus a few units of roundoff of the element.
A wrong kernel (a dropped term, a wrong norm, swapped gate/up halves, a
rotation in the wrong convention) is off by O(1) relative and fails; an
implementation as accurate as HF passes.
"""

import copy
import math

import pytest
import torch

import myns
from conftest import DEVICES

transformers = pytest.importorskip("transformers")

FACTOR = 8.0
FAMILIES = ["llama", "mistral", "qwen2"]


def tiny(family, device, dtype, vocab=101, attn="eager", **extra):
    kw = dict(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6, attn_implementation=attn, **extra)
    cfg = {
        "llama": transformers.LlamaConfig,
        "mistral": transformers.MistralConfig,
        "qwen2": transformers.Qwen2Config,
    }[family](**kw)
    cls = {"llama": transformers.LlamaForCausalLM, "mistral": transformers.MistralForCausalLM,
           "qwen2": transformers.Qwen2ForCausalLM}[family]
    torch.manual_seed(0)
    model = cls(cfg).to(torch.float64)
    with torch.no_grad():  # non-trivial norm weights
        for m in model.modules():
            if type(m).__name__.endswith("RMSNorm"):
                m.weight.uniform_(0.5, 1.5)
    model = model.to(device)  # (Module.to converts in place and returns the module itself)
    return model, copy.deepcopy(model).to(dtype=dtype)


def unit(dtype):
    return {torch.float32: 2.0**-24, torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float64: 2.0**-53}[dtype]


def check_close(out, hf, ref, dtype, what):
    """Elementwise: |out - ref| <= FACTOR * (HF's worst error in the row) + 4 u |ref|."""
    out, hf, ref = out.double(), hf.double(), ref.double()
    hf_err = (hf - ref).abs()
    row = hf_err.reshape(-1, hf_err.shape[-1]).amax(-1).reshape(*hf_err.shape[:-1], 1) if hf_err.dim() else hf_err
    bound = FACTOR * row + 4 * unit(dtype) * ref.abs() + 1e-30
    bad = (out - ref).abs() > bound
    assert not bad.any(), (
        f"{what}: {int(bad.sum())} of {bad.numel()} elements outside the bound; worst "
        f"{float(((out - ref).abs() / bound).max()):.3g} x bound"
    )


def batch(device, vocab=101, b=2, s=12):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (b, s), generator=g).to(device)
    labels = ids.clone()
    labels[0, :3] = -100  # ignored positions, as padding gives
    return ids, labels


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("family", FAMILIES)
def test_patched_model_matches_hf(family, dtype, device):
    ref, hf = tiny(family, device, dtype)
    ours = myns.patch(copy.deepcopy(hf))
    ids, labels = batch(device)
    # Logits, no labels.
    with torch.no_grad():
        r, h, o = (m(input_ids=ids).logits for m in (ref, hf, ours))
    check_close(o, h, r, dtype, f"{family} {dtype} logits")
    # Loss with labels (fused linear cross-entropy, no logits), and gradients.
    outs = []
    for m in (ref, hf, ours):
        m.zero_grad()
        out = m(input_ids=ids, labels=labels)
        out.loss.backward()
        outs.append(out)
    assert outs[2].logits is None, "with labels, the patched model makes no logits"
    check_close(outs[2].loss.reshape(1), outs[1].loss.reshape(1), outs[0].loss.reshape(1), dtype, "loss")
    for name in ("model.embed_tokens.weight", "lm_head.weight", "model.layers.0.self_attn.q_proj.weight"):
        grads = [dict(m.named_parameters())[name].grad for m in (ref, hf, ours)]
        check_close(grads[2], grads[1], grads[0], dtype, f"grad of {name}")


def _saved_shapes(model, **inputs):
    """The shapes of the tensors autograd saves in a forward pass."""
    shapes = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
        out = model(**inputs)
    return out, shapes


@pytest.mark.parametrize("device", DEVICES)
def test_recompute_mlp(device):
    """myns.patch(recompute_mlp=True) keeps no [tokens, intermediate]
    activation (the gated product is recomputed in backward) and gives the
    same loss and gradients as without; under autocast and compiled too."""
    ref, hf = tiny("llama", device, torch.float64)
    plain, lean = myns.patch(copy.deepcopy(hf)), myns.patch(copy.deepcopy(hf), recompute_mlp=True)
    assert lean.model.layers[0].mlp.recompute and not plain.model.layers[0].mlp.recompute
    ids, labels = batch(device)
    # [tokens, intermediate], in any leading shape.
    gated = lambda shape: len(shape) >= 2 and shape[-1] == hf.config.intermediate_size and math.prod(shape[:-1]) == ids.numel()  # noqa: E731
    outs = []
    for m in (plain, lean):
        out, shapes = _saved_shapes(m, input_ids=ids, labels=labels)
        out.loss.backward()
        outs.append((out.loss, [s for s in shapes if gated(s)]))
    assert outs[0][1] and not outs[1][1], f"the gated product is kept only without recompute: {outs[0][1]}, {outs[1][1]}"
    torch.testing.assert_close(outs[1][0], outs[0][0], rtol=1e-12, atol=0)
    for (name, a), b in zip(plain.named_parameters(), lean.parameters()):
        torch.testing.assert_close(b.grad, a.grad, rtol=1e-10, atol=1e-12, msg=name)
    # Autocast (bf16 products of float32 weights): as HF under autocast.
    _, hf32 = tiny("llama", device, torch.float32)
    lean32 = myns.patch(copy.deepcopy(hf32), recompute_mlp=True)
    dev = torch.device(device).type
    with torch.autocast(dev, dtype=torch.bfloat16):
        h = hf32(input_ids=ids, labels=labels).loss
        o = lean32(input_ids=ids, labels=labels).loss
    o.backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in lean32.parameters())
    check_close(o.reshape(1), h.reshape(1), ref(input_ids=ids, labels=labels).loss.reshape(1), torch.bfloat16,
                "recompute, autocast loss")
    # Compiled in one graph.
    torch._dynamo.reset()
    explain = torch._dynamo.explain(lean32)(input_ids=ids, labels=labels)
    assert explain.graph_break_count == 0, explain.break_reasons
    loss = torch.compile(lean32, fullgraph=True)(input_ids=ids, labels=labels).loss
    loss.backward()
    eager = lean32(input_ids=ids, labels=labels).loss
    assert abs(float(loss.detach() - eager.detach())) <= 1e-5 * abs(float(eager.detach()))


def test_patch_swaps_the_pieces():
    _, hf = tiny("llama", "cpu", torch.float32)
    m = myns.patch(hf)
    layer = m.model.layers[0]
    assert isinstance(layer.mlp, myns.nn.SwiGLUMLP)
    assert isinstance(layer.input_layernorm, myns.nn.RMSNorm)
    assert isinstance(layer.post_attention_layernorm, myns.nn.RMSNorm)
    assert isinstance(m.model.norm, myns.nn.RMSNorm)
    attn = m.model.layers[0].self_attn
    assert attn.forward.__func__.__globals__["apply_rotary_pos_emb"] is myns.nn._rope
    # Only this model: the family's module and another model keep HF's rotary embedding.
    import transformers.models.llama.modeling_llama as ml

    assert ml.apply_rotary_pos_emb is not myns.nn._rope
    _, other = tiny("llama", "cpu", torch.float32)
    assert "forward" not in vars(other.model.layers[0].self_attn)


@pytest.mark.parametrize("device", DEVICES)
def test_patched_model_compiles_without_graph_breaks(device):
    ref, hf = tiny("llama", device, torch.float32)
    ours = myns.patch(copy.deepcopy(hf))
    ids, labels = batch(device)
    torch._dynamo.reset()
    explain = torch._dynamo.explain(ours)(input_ids=ids, labels=labels)
    assert explain.graph_break_count == 0, explain.break_reasons
    compiled = torch.compile(ours, fullgraph=True, dynamic=True)
    eager_loss = ours(input_ids=ids, labels=labels).loss
    loss = compiled(input_ids=ids, labels=labels).loss
    loss.backward()
    ref_loss = ref(input_ids=ids, labels=labels).loss
    hf_loss = hf(input_ids=ids, labels=labels).loss
    check_close(loss.reshape(1), hf_loss.reshape(1), ref_loss.reshape(1), torch.float32, "compiled loss")
    assert torch.equal(loss, eager_loss) or abs(float(loss - eager_loss)) <= 1e-6 * abs(float(eager_loss))
    # Another sequence length: the same compiled graph (dynamic shapes).
    ids2, labels2 = batch(device, s=9)
    assert torch.isfinite(compiled(input_ids=ids2, labels=labels2).loss)


def sdpa_calls(model, **inputs):
    """Runs torch.compile(model, fullgraph=True) on `inputs` and returns the
    loss and, per scaled_dot_product_attention call in the traced graph,
    (whether it has a mask, its is_causal)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    loss = torch.compile(model, backend=backend, fullgraph=True)(**inputs).loss
    calls = [(n.kwargs.get("attn_mask") is not None, n.kwargs.get("is_causal"))
             for gm in graphs for n in gm.graph.nodes
             if n.op == "call_function" and n.target is torch.nn.functional.scaled_dot_product_attention]
    return loss, calls


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", FAMILIES)
def test_patched_sdpa_model_compiles_to_is_causal(family, device):
    """Under torch.compile transformers builds a causal mask it leaves out in
    eager mode; the patched model runs SDPA with is_causal there, same loss."""
    ref, hf = tiny(family, device, torch.float32, attn="sdpa")
    ours = myns.patch(copy.deepcopy(hf))
    assert ours.config._attn_implementation == "myns_sdpa" and hf.config._attn_implementation == "sdpa"
    ids, labels = batch(device)
    loss, calls = sdpa_calls(ours, input_ids=ids, labels=labels)
    assert calls == [(False, True)] * 2, calls
    _, hf_calls = sdpa_calls(hf, input_ids=ids, labels=labels)
    assert hf_calls == [(True, False)] * 2, f"transformers now skips the mask itself: {hf_calls}"
    r, h = (m(input_ids=ids, labels=labels).loss for m in (ref, hf))
    check_close(loss.reshape(1), h.reshape(1), r.reshape(1), torch.float32, f"{family} compiled loss")
    # Without a cache (use_cache=False, as with gradient checkpointing) and
    # no position ids, nothing can be packed: still is_causal.
    assert sdpa_calls(ours, input_ids=ids, labels=labels, use_cache=False)[1] == [(False, True)] * 2
    # is_causal=False keeps transformers' mask.
    plain = myns.patch(copy.deepcopy(hf), is_causal=False)
    assert plain.config._attn_implementation == "sdpa"
    assert sdpa_calls(plain, input_ids=ids, labels=labels)[1] == [(True, False)] * 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["padding", "packed", "sliding"])
def test_patched_sdpa_model_keeps_masks_that_matter(case, device):
    """A padding mask, packed sequences (position ids restarting, no cache)
    and a sliding window keep their masks: the compiled patched model's loss
    and logits match transformers' eager model on the same inputs."""
    family, extra = ("mistral", dict(sliding_window=5)) if case == "sliding" else ("llama", {})
    ref, hf = tiny(family, device, torch.float32, attn="sdpa", **extra)
    ours = myns.patch(copy.deepcopy(hf))
    ids, labels = batch(device)
    inputs = dict(input_ids=ids, labels=labels)
    if case == "padding":
        mask = torch.ones_like(ids)
        mask[0, :3] = 0
        inputs["attention_mask"] = mask
    elif case == "packed":
        inputs["position_ids"] = torch.arange(ids.shape[1], device=device).remainder(5).expand_as(ids)
        inputs["use_cache"] = False
    loss, calls = sdpa_calls(ours, **inputs)
    assert calls and all(has_mask for has_mask, _ in calls), calls
    r, h = (m(**inputs).loss for m in (ref, hf))
    check_close(loss.reshape(1), h.reshape(1), r.reshape(1), torch.float32, f"{case} compiled loss")
    # The loss alone could hide a wrong mask at a few positions: the logits too.
    out = dict(inputs, labels=None)
    with torch.no_grad():
        lr, lh = (m(**out).logits for m in (ref, hf))
        lo = torch.compile(ours, fullgraph=True)(**out).logits
    check_close(lo, lh, lr, torch.float32, f"{case} compiled logits")


def test_training_with_labels_keeps_no_kv_cache():
    """A training step with labels: no KV cache kept or returned (transformers
    would fill one with a copy of every layer's keys and values); the same
    loss; a cache where asked for (use_cache=True) or in eval mode."""
    ref, hf = tiny("llama", "cpu", torch.float32, attn="sdpa")
    ours = myns.patch(copy.deepcopy(hf))
    ids, labels = batch("cpu")
    out, hf_out = ours(input_ids=ids, labels=labels), hf(input_ids=ids, labels=labels)
    assert out.past_key_values is None and hf_out.past_key_values is not None
    check_close(out.loss.reshape(1), hf_out.loss.reshape(1), ref(input_ids=ids, labels=labels).loss.reshape(1),
                torch.float32, "loss without a cache")
    assert ours(input_ids=ids, labels=labels, use_cache=True).past_key_values.get_seq_length() == ids.shape[1]
    ours.eval()
    assert ours(input_ids=ids, labels=labels).past_key_values.get_seq_length() == ids.shape[1]
    # Gradient checkpointing: no cache made for layers that refuse one (with a warning).
    ours.train()
    ours.gradient_checkpointing_enable()

    def refuse(**kwargs):
        raise AssertionError("a cache was made under gradient checkpointing")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(myns.nn, "_UNKEPT_CACHE", [refuse])
        out = ours(input_ids=ids, labels=labels)
    out.loss.backward()
    assert out.past_key_values is None


@pytest.mark.parametrize("device", DEVICES)
def test_patched_model_under_autocast(device):
    ref, hf = tiny("llama", device, torch.float32)
    ours = myns.patch(copy.deepcopy(hf))
    ids, labels = batch(device)
    dev = torch.device(device).type
    with torch.autocast(dev, dtype=torch.bfloat16):
        h = hf(input_ids=ids, labels=labels).loss
        o = ours(input_ids=ids, labels=labels).loss
    assert o.dtype == torch.float32
    r = ref(input_ids=ids, labels=labels).loss
    check_close(o.reshape(1), h.reshape(1), r.reshape(1), torch.bfloat16, "autocast loss")


@pytest.mark.parametrize("device", DEVICES)
def test_layers_against_torch(device):
    torch.manual_seed(0)
    x = torch.randn(5, 7, 64, dtype=torch.float64, device=device)
    # RMSNorm against transformers' LlamaRMSNorm, in bf16: at most one ulp apart
    # (HF rounds before the weight multiply, myns after).
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    hf = LlamaRMSNorm(64, eps=1e-6).to(device)
    with torch.no_grad():
        hf.weight.uniform_(0.5, 1.5)
    ours = myns.nn.RMSNorm(64, eps=1e-6, device=device)
    with torch.no_grad():
        ours.weight.copy_(hf.weight)
    xb = x.to(torch.bfloat16)
    a, b = ours.to(torch.bfloat16)(xb).double(), hf.to(torch.bfloat16)(xb).double()
    assert ((a - b).abs() <= 2.0**-7 * b.abs() + 1e-30).all()
    # LayerNorm against torch.nn.LayerNorm in float64.
    ln = torch.nn.LayerNorm(64, eps=1e-5, dtype=torch.float64, device=device)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-1, 1)
    mine = myns.nn.LayerNorm(64, eps=1e-5, dtype=torch.float64, device=device)
    mine.load_state_dict(ln.state_dict())
    torch.testing.assert_close(mine(x), ln(x), rtol=1e-12, atol=1e-12)
    # SwiGLUMLP.from_hf against the HF MLP in float64.
    from transformers.models.llama.modeling_llama import LlamaMLP

    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=96)
    mlp = LlamaMLP(cfg).to(device=device, dtype=torch.float64)
    torch.testing.assert_close(myns.nn.SwiGLUMLP.from_hf(mlp)(x), mlp(x), rtol=1e-12, atol=1e-12)


def test_unsupported_model_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="myns.patch: Linear is not supported"):
        myns.patch(torch.nn.Linear(2, 2))
