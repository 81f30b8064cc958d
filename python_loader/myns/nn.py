"""Layers built on the myns ops, and ``patch(model)``, which swaps a
transformers Llama, Mistral or Qwen2 model's pieces for them in place.

Everything here is plain ``torch.nn`` code calling ``torch.ops.myns.*``: it
runs in eager mode, under ``torch.compile(fullgraph=True)``, under
``torch.autocast`` (the ops are registered for it as their aten
counterparts are) and under DDP/FSDP2 (parameters stay ordinary
parameters).
"""

from __future__ import annotations

import sys
import types

import torch
from torch import nn

__all__ = ["RMSNorm", "LayerNorm", "SwiGLUMLP", "patch"]

ops = torch.ops.myns


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dimension, in one
    pass (float32 accumulation for half types). transformers' LlamaRMSNorm
    rounds the normalised value to the input dtype before multiplying by the
    weight; this rounds once, after: the two differ by at most one unit in
    the last place of the output's dtype."""

    def __init__(self, hidden_size: int, eps: float = 1e-6, device=None, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        if x.dtype != w.dtype:  # e.g. autocast: as transformers' weight * x promotes
            dt = torch.promote_types(x.dtype, w.dtype)
            x, w = x.to(dt), w.to(dt)
        return ops.rms_norm(x, w, self.eps)

    def extra_repr(self) -> str:
        return f"{tuple(self.weight.shape)}, eps={self.eps}"


class LayerNorm(nn.Module):
    """``torch.nn.LayerNorm`` over the last dimension, on ``myns.layer_norm``."""

    def __init__(self, hidden_size: int, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.eps = eps
        kw = dict(device=device, dtype=dtype)
        self.weight = nn.Parameter(torch.ones(hidden_size, **kw)) if elementwise_affine else None
        self.bias = nn.Parameter(torch.zeros(hidden_size, **kw)) if elementwise_affine and bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ops.layer_norm(x, self.weight, self.bias, self.eps)


class _SiluAndMulDown(torch.autograd.Function):
    """``F.linear(silu_and_mul(h), weight, bias)`` keeping ``h`` (which the
    gated op's gradient reads anyway) but not ``silu_and_mul(h)``: backward
    recomputes that, one elementwise pass over ``h``."""

    @staticmethod
    def forward(ctx, h, weight, bias):
        y = nn.functional.linear(ops.silu_and_mul(h), weight, bias)
        ctx.save_for_backward(h, weight)
        ctx.has_bias = bias is not None
        ctx.dtype = y.dtype  # the product's dtype (the autocast dtype under autocast)
        return y

    @staticmethod
    def backward(ctx, gy):
        h, weight = ctx.saved_tensors
        dt = ctx.dtype
        gy = gy.to(dt)
        g2 = gy.reshape(-1, gy.shape[-1])
        gh = gw = gb = None
        if ctx.needs_input_grad[1]:
            c = ops.silu_and_mul(h).to(dt)
            gw = g2.t() @ c.reshape(-1, c.shape[-1])
            del c
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g2.sum(0)
        if ctx.needs_input_grad[0]:
            gh = ops.silu_and_mul_backward((gy @ weight.to(dt)).to(h.dtype), h)
        # Autograd casts each gradient to its input's dtype.
        return gh, gw, gb


class SwiGLUMLP(nn.Module):
    """``down(silu(gate(x)) * up(x))`` with gate and up as one projection
    (one GEMM) and ``myns.silu_and_mul`` between: the gated product needs
    no intermediate of its own. ``from_hf`` builds one from a transformers
    MLP (``gate_proj``, ``up_proj``, ``down_proj``), weights copied.

    With ``recompute``, training keeps the gate/up output but not the gated
    product for backward, which recomputes it: a ``[tokens, intermediate]``
    activation less per MLP (2 GiB over the 16 layers of the 1.1B Llama of
    ``bench/bench_llama.py`` at 8192 tokens) for one more elementwise pass
    per MLP in backward. Only while ``down_proj`` is a plain ``nn.Linear``
    without hooks (not, say, a LoRA wrapper)."""

    def __init__(self, hidden_size: int, intermediate_size: int, bias: bool = False, device=None, dtype=None,
                 recompute: bool = False):
        super().__init__()
        kw = dict(bias=bias, device=device, dtype=dtype)
        self.gate_up_proj = nn.Linear(hidden_size, 2 * intermediate_size, **kw)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, **kw)
        self.recompute = recompute

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.gate_up_proj(x)
        d = self.down_proj
        if (self.recompute and torch.is_grad_enabled() and type(d) is nn.Linear and not d._forward_hooks
                and not d._forward_pre_hooks):
            return _SiluAndMulDown.apply(h, d.weight, d.bias)
        return d(ops.silu_and_mul(h))

    def extra_repr(self) -> str:
        return f"recompute={self.recompute}"

    @classmethod
    def from_hf(cls, mlp: nn.Module, recompute: bool = False) -> "SwiGLUMLP":
        g, u, d = mlp.gate_proj, mlp.up_proj, mlp.down_proj
        w = g.weight
        new = cls(g.in_features, g.out_features, bias=g.bias is not None, device=w.device, dtype=w.dtype,
                  recompute=recompute)
        with torch.no_grad():
            new.gate_up_proj.weight.copy_(torch.cat([g.weight, u.weight]))
            new.down_proj.weight.copy_(d.weight)
            if g.bias is not None:
                new.gate_up_proj.bias.copy_(torch.cat([g.bias, u.bias]))
                new.down_proj.bias.copy_(d.bias)
        return new.train(mlp.training)


# --- patch ----------------------------------------------------------------

_FAMILIES = {
    "LlamaForCausalLM": "llama",
    "LlamaModel": "llama",
    "MistralForCausalLM": "mistral",
    "MistralModel": "mistral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen2Model": "qwen2",
}


def _rope(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """transformers' apply_rotary_pos_emb on myns.rope (q, k as [B, H, S, D])."""
    if unsqueeze_dim != 1 or cos.dim() != 3:
        raise NotImplementedError(
            f"myns.patch: apply_rotary_pos_emb with unsqueeze_dim={unsqueeze_dim} and cos of rank {cos.dim()} "
            "(myns.rope takes q, k as [B, H, S, D] and cos, sin as [B, S, D])"
        )
    # Mixed dtypes (autocast: bf16 q and k, float32 cos and sin) promote as
    # transformers' q * cos does.
    dt = torch.promote_types(q.dtype, cos.dtype)
    if not (q.dtype == k.dtype == cos.dtype == sin.dtype == dt):
        q, k, cos, sin = q.to(dt), k.to(dt), cos.to(dt), sin.to(dt)
    return ops.rope(q, k, cos, sin)


_ROPE_FORWARDS: dict = {}


def _rope_forward(cls):
    """``cls.forward`` with ``apply_rotary_pos_emb`` bound to myns.rope: the
    same code over a copy of its module's globals, so only the patched
    model's attention changes, not every model of the family. The copy is a
    module of its own in ``sys.modules``: dynamo finds a frame's module by
    ``__name__``, and a copy still named after transformers' module makes
    torch 2.13 guard on transformers' function instead of ours."""
    if cls not in _ROPE_FORWARDS:
        fn = cls.forward
        if "apply_rotary_pos_emb" not in fn.__code__.co_names:
            raise NotImplementedError(f"myns.patch: {cls.__name__}.forward does not call apply_rotary_pos_emb")
        name = f"myns._patched.{fn.__globals__['__name__']}"
        module = sys.modules.get(name)
        if module is None:
            module = types.ModuleType(name)
            module.__dict__.update(fn.__globals__)
            module.__dict__.update(__name__=name, __spec__=None, apply_rotary_pos_emb=_rope)
            sys.modules[name] = module
        new = types.FunctionType(fn.__code__, module.__dict__, fn.__name__, fn.__defaults__, fn.__closure__)
        new.__kwdefaults__ = fn.__kwdefaults__
        new.__qualname__ = fn.__qualname__
        new.__module__ = name
        _ROPE_FORWARDS[cls] = new
    return _ROPE_FORWARDS[cls]


def _decoder_forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                     use_cache=False, position_embeddings=None, **kwargs):
    """The decoder layer with the residual add and the post-attention norm
    fused (myns.add_rms_norm)."""
    residual = hidden_states
    hidden_states = self.input_layernorm(hidden_states)
    hidden_states, _ = self.self_attn(
        hidden_states=hidden_states,
        attention_mask=attention_mask,
        position_ids=position_ids,
        past_key_values=past_key_values,
        use_cache=use_cache,
        position_embeddings=position_embeddings,
        **kwargs,
    )
    norm = self.post_attention_layernorm
    w = norm.weight
    if not (hidden_states.dtype == residual.dtype == w.dtype):  # autocast: promote as `residual + h` does
        dt = torch.promote_types(torch.promote_types(hidden_states.dtype, residual.dtype), w.dtype)
        hidden_states, residual, w = hidden_states.to(dt), residual.to(dt), w.to(dt)
    hidden_states, residual = ops.add_rms_norm(hidden_states, residual, w, norm.eps)
    return residual + self.mlp(hidden_states)


_UNKEPT_CACHE = []  # the cache class below, made by patch() (transformers is imported then)


def _make_unkept_cache_class() -> None:
    """Makes ``_UNKEPT_CACHE[0]``: a transformers DynamicCache whose
    ``update`` keeps nothing (each layer attends to its own keys and values,
    as with an empty cache)."""
    if not _UNKEPT_CACHE:
        from transformers import DynamicCache

        class UnkeptCache(DynamicCache):
            def update(self, key_states, value_states, layer_idx, *args, **kwargs):
                return key_states, value_states

        _UNKEPT_CACHE.append(UnkeptCache)


def _causal_lm_forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                       inputs_embeds=None, labels=None, use_cache=None, logits_to_keep=0, **kwargs):
    """The causal LM with the loss on myns.fused_linear_cross_entropy when
    labels are given: the [tokens, vocab] logits never exist (``logits`` is
    then None). Without labels, the original forward."""
    if labels is None:
        return self._myns_original_forward(input_ids=input_ids, attention_mask=attention_mask,
                                           position_ids=position_ids, past_key_values=past_key_values,
                                           inputs_embeds=inputs_embeds, use_cache=use_cache,
                                           logits_to_keep=logits_to_keep, **kwargs)
    from transformers.modeling_outputs import CausalLMOutputWithPast

    num_items = kwargs.pop("num_items_in_batch", None)
    ignore_index = kwargs.pop("ignore_index", -100)
    # Training with labels keeps no KV cache unless asked to (use_cache=True):
    # with use_cache from the config (True by default) transformers would copy
    # every layer's keys and values into a cache, held to the end of the
    # forward (the step's memory peak) and then dropped. A cache that keeps
    # nothing stands in rather than none, so that the masks are those of
    # transformers' default path: with no cache it looks for packed sequences
    # in the position ids, which under torch.compile means building the
    # causal mask. Only where nothing can be packed (no position ids given),
    # and not with gradient checkpointing, whose layers refuse any cache
    # (with a warning).
    unkept = (self.training and past_key_values is None and position_ids is None and not use_cache
              and not getattr(self.model, "gradient_checkpointing", False))
    if unkept:
        past_key_values = _UNKEPT_CACHE[0](config=self.config)
    outputs = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache, **kwargs)
    hidden = outputs.last_hidden_state
    # As transformers' ForCausalLMLoss: predict token t + 1 from position t.
    shift = nn.functional.pad(labels, (0, 1), value=ignore_index)[..., 1:].to(hidden.device)
    flat = hidden.reshape(-1, hidden.shape[-1])
    if num_items is None:
        loss = ops.fused_linear_cross_entropy(flat, self.lm_head.weight, shift.reshape(-1), ignore_index, "mean")
    else:
        loss = ops.fused_linear_cross_entropy(flat, self.lm_head.weight, shift.reshape(-1), ignore_index, "sum")
        loss = loss / (num_items.to(loss.device) if torch.is_tensor(num_items) else num_items)
    if self.lm_head.bias is not None:
        raise NotImplementedError("myns.patch: an lm_head with a bias")
    return CausalLMOutputWithPast(loss=loss, logits=None, past_key_values=None if unkept else outputs.past_key_values,
                                  hidden_states=outputs.hidden_states, attentions=outputs.attentions)


# SDPA with is_causal under torch.compile. transformers leaves out the causal
# mask (SDPA's is_causal instead) only when it is not tracing: under
# torch.compile it builds a [batch, 1, q, kv] mask even for a plain causal
# mask with no padding, and SDPA with a mask runs on slower kernels (on the
# H100, bf16, 32 heads x 2048 tokens: 1.9 ms forward + backward per layer
# against 0.7 with is_causal; bench/explore/compile_gap.py). The patched
# model's attention is transformers' own SDPA function under another name,
# whose mask function leaves the mask out on the conditions transformers'
# eager path checks (`_ignore_causal_mask_sdpa`) that need no data: the
# caller allows the skip (transformers' mask builders do not when packed
# sequences, extra mask functions or bidirectional masks are involved), no
# padding mask, nothing cached before (offsets 0), as many queries as keys,
# shorter than any sliding window. Everything else goes to transformers'
# sdpa_mask unchanged.
_SDPA = "myns_sdpa"
_HF_SDPA_MASK = []  # transformers' sdpa_mask, found at registration


def _sdpa_mask(*args, **kwargs):
    """transformers' ``sdpa_mask``, or ``None`` (SDPA's ``is_causal``) for a
    plain causal mask (see above)."""
    names = ("batch_size", "q_length", "kv_length", "q_offset", "kv_offset", "mask_function", "attention_mask")
    a = dict(zip(names, args), **kwargs)
    q_offset, kv_offset, local = a.get("q_offset", 0), a.get("kv_offset", 0), a.get("local_size")
    if (a.get("allow_is_causal_skip", True) and a.get("attention_mask") is None
            and type(q_offset) is int and q_offset == 0 and type(kv_offset) is int and kv_offset == 0
            and a["q_length"] == a["kv_length"] and (local is None or a["kv_length"] < local)):
        return None
    return _HF_SDPA_MASK[0](*args, **kwargs)


def _use_causal_sdpa(model: nn.Module) -> None:
    """Switches a model on transformers' SDPA attention to the same function
    under the name ``myns_sdpa`` with ``_sdpa_mask``."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa" or not hasattr(model, "set_attn_implementation"):
        return
    try:
        from transformers import AttentionInterface, AttentionMaskInterface
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
        from transformers.masking_utils import sdpa_mask
    except ImportError:  # an older transformers: keep its attention
        return
    _HF_SDPA_MASK[:] = [sdpa_mask]
    AttentionInterface.register(_SDPA, sdpa_attention_forward)
    AttentionMaskInterface.register(_SDPA, _sdpa_mask)
    model.set_attn_implementation(_SDPA)


def _is_rms_norm(m: nn.Module) -> bool:
    return type(m).__name__.endswith("RMSNorm") and hasattr(m, "weight") and hasattr(m, "variance_epsilon")


def patch(model: nn.Module, *, rms_norm: bool = True, mlp: bool = True, rope: bool = True,
          loss: bool = True, is_causal: bool = True, recompute_mlp: bool = False) -> nn.Module:
    """Swaps, in place, a transformers Llama, Mistral or Qwen2 model's
    RMSNorms (the post-attention one fused with its residual add), MLPs
    (SwiGLU on one gate/up projection), rotary embedding and loss (fused
    linear cross-entropy when labels are given) for myns ones, and returns
    the model. Only this model changes (not its class or module, unlike
    Liger-Kernel's patching).

    With ``is_causal`` (and the model on transformers' ``"sdpa"``
    attention), attention runs with SDPA's ``is_causal`` rather than a
    materialised causal mask under ``torch.compile`` too, where transformers
    would build one only because it is tracing (same result, faster
    kernels); the model's attention implementation is then named
    ``"myns_sdpa"``.

    In training mode with labels and without ``use_cache=True``, the patched
    model keeps no KV cache (``past_key_values`` in its output is None):
    transformers' default would copy every layer's keys and values into one
    that a training step drops.

    With ``recompute_mlp``, backward recomputes each MLP's gated product
    instead of keeping it (``SwiGLUMLP(recompute=True)``): less memory for
    a little more time.

    Patch before building the optimizer: the MLPs get new parameters
    (``gate_up_proj`` replaces ``gate_proj`` and ``up_proj``).
    """
    family = next((_FAMILIES[c.__name__] for c in type(model).__mro__ if c.__name__ in _FAMILIES), None)
    if family is None:
        raise NotImplementedError(
            f"myns.patch: {type(model).__name__} is not supported (Llama, Mistral and Qwen2 models are: "
            f"{', '.join(sorted(_FAMILIES))})"
        )
    act = getattr(model.config, "hidden_act", "silu")
    for layer in list(model.modules()):
        name = type(layer).__name__
        if rope and name.endswith("Attention") and hasattr(layer, "q_proj"):
            layer.forward = types.MethodType(_rope_forward(type(layer)), layer)
        if name.endswith("DecoderLayer"):
            if rms_norm:
                for attr in ("input_layernorm", "post_attention_layernorm"):
                    hf = getattr(layer, attr)
                    new = RMSNorm(hf.weight.shape[0], hf.variance_epsilon, device=hf.weight.device,
                                  dtype=hf.weight.dtype)
                    with torch.no_grad():
                        new.weight.copy_(hf.weight)
                    setattr(layer, attr, new)
                layer.forward = types.MethodType(_decoder_forward, layer)
            if mlp:
                if act != "silu":
                    raise NotImplementedError(f"myns.patch: MLP activation {act!r} (SwiGLU needs 'silu')")
                layer.mlp = SwiGLUMLP.from_hf(layer.mlp, recompute=recompute_mlp)
    if rms_norm:
        for parent in list(model.modules()):
            for attr, child in list(parent.named_children()):
                if _is_rms_norm(child):
                    new = RMSNorm(child.weight.shape[0], child.variance_epsilon, device=child.weight.device,
                                  dtype=child.weight.dtype)
                    with torch.no_grad():
                        new.weight.copy_(child.weight)
                    setattr(parent, attr, new)
    if loss and hasattr(model, "lm_head"):
        _make_unkept_cache_class()
        model._myns_original_forward = model.forward
        model.forward = types.MethodType(_causal_lm_forward, model)
    if is_causal:
        _use_causal_sdpa(model)
    return model
