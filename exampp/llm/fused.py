"""Speed-ups that leave a loaded HuggingFace model's function as it is, applied by the hf backend.

- :func:`fuse_gelu`: ``gelu_new`` (FLAN-T5's gated-gelu, GPT-2) is written in transformers as eight
  elementwise operations, each a pass over the feed-forward activations; ``nn.GELU(approximate="tanh")``
  is the same formula in one kernel (outputs differ by float rounding only, ~1e-6).
- :func:`share_position_bias`: with SDPA attention, T5 combines its relative position bias and the
  padding mask into one ``[batch, heads, q, k]`` float mask in *every* layer, although the bias and
  the mask are the same tensors in all the layers of a stack. Here the combined mask is built once
  per stack (the first layer) and kept on the bias tensor, so that it goes when the stack's forward
  pass ends. Bit-identical to transformers' SDPA path.

Together they take about a quarter off a FLAN-T5 encoder pass in fp32 on CPU (benchmarks/grading.py).

What cannot be shared: the encoder pass of a passage across the questions asked of it. FLAN-T5's
encoder is bidirectional and the self-rating prompt puts the question before the passage, so every
token's encoding depends on the question; sharing would need a prompt with the passage first *and*
a causal (decoder-only) model, whose prefix cache could then be reused.
"""
from __future__ import annotations

from torch import nn

SDPA_SHARED_BIAS = "exampp_sdpa_shared_bias"  # the attention implementation's name in transformers' registries


def fuse_gelu(model: nn.Module) -> int:
    """Replace every ``NewGELUActivation`` in ``model`` by ``nn.GELU(approximate="tanh")``; the number replaced."""
    from transformers.activations import NewGELUActivation

    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if type(child) is NewGELUActivation:
                setattr(module, name, nn.GELU(approximate="tanh"))
                replaced += 1
    return replaced


def share_position_bias(model) -> bool:
    """Switch a model with T5-style relative attention bias running on SDPA to :data:`SDPA_SHARED_BIAS`;
    False (nothing changed) for other models and other attention implementations."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa" or not any(
            hasattr(m, "relative_attention_bias") for m in model.modules()):
        return False
    _register()
    model.set_attn_implementation(SDPA_SHARED_BIAS)
    return True


def _sdpa_shared_bias(module, query, key, value, attention_mask, *args, position_bias=None, **kwargs):
    """transformers' SDPA attention, its float mask built once per (position bias, mask) pair. Without a
    mask (no padding, or causality left to SDPA) the bias goes as it is: nothing to share."""
    from transformers.integrations.sdpa_attention import create_position_bias_mask, sdpa_attention_forward

    if position_bias is None or attention_mask is None:
        # transformers hands the attention no positional argument beyond the mask: *args is empty
        return sdpa_attention_forward(module, query, key, value, attention_mask, *args,  # type: ignore[misc]
                                      position_bias=position_bias, **kwargs)
    kept = getattr(position_bias, "_exampp_combined", None)
    # The same bias and mask objects (never changed in place) give the same combined mask; with a
    # mask given, causality is in the mask and create_position_bias_mask ignores is_causal.
    if kept is None or kept[0] is not attention_mask:
        kept = (attention_mask, create_position_bias_mask(position_bias, attention_mask, False, query, key))
        position_bias._exampp_combined = kept
    return sdpa_attention_forward(module, query, key, value, kept[1], *args, **kwargs)


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(SDPA_SHARED_BIAS, _sdpa_shared_bias)
    AttentionMaskInterface.register(SDPA_SHARED_BIAS, sdpa_mask)  # the masks SDPA takes


def compile_stacks(model) -> None:
    """``torch.compile`` (dynamic shapes) the encoder and decoder stacks of a seq2seq model, or the
    whole of a causal one, in place; the plain SDPA attention is put back first, as the compiler
    fuses the mask building itself."""
    if getattr(model.config, "_attn_implementation", None) == SDPA_SHARED_BIAS:
        model.set_attn_implementation("sdpa")
    parts = [model.get_encoder(), model.get_decoder()] if model.config.is_encoder_decoder else [model]
    for part in parts:
        part.compile(dynamic=True)


def speed_up(model, *, compile: bool = False) -> None:
    """All of the above that applies: GELU fused, the position bias shared (or the stacks compiled)."""
    fuse_gelu(model)
    if compile:
        compile_stacks(model)
    else:
        share_position_bias(model)

