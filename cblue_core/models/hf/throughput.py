"""Faster batches on CPU: length-bucketed batches, and a last layer that computes the first
token only where the head reads nothing else."""
from __future__ import annotations

import types
from collections.abc import Sequence


def length_buckets(lengths: Sequence[int], size: int, slack: float = 0.5) -> list[list[int]]:
    """Batches (lists of positions) of at most ``size`` examples, by increasing length, cut
    early when padding would exceed ``slack`` of the batch's real tokens: batches of similar
    lengths, so almost no compute goes to padding."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    cur: list[int] = []
    tokens = 0
    for i in order:
        n = lengths[i]
        if cur and (len(cur) >= size or n * (len(cur) + 1) > (1 + slack) * (tokens + n)):
            batches.append(cur)
            cur, tokens = [], 0
        cur.append(i)
        tokens += n
    if cur:
        batches.append(cur)
    return batches


# Architectures whose sequence-classification head reads the first token's last hidden state only
# (BERT's pooler, RoBERTa/ELECTRA's classification heads), with BERT's layer layout.
_FIRST_TOKEN_TYPES = {"bert", "roberta", "xlm-roberta", "camembert", "electra", "ernie", "data2vec-text"}


def _first_token_forward(layer, hidden_states, attention_mask=None, *args, **kwargs):
    """The forward of an encoder's last (BERT-layout) layer for the first position only: its
    query, attention output and feed-forward (keys and values still from every position);
    returns hidden states of shape (batch, 1, hidden)."""
    import torch

    sa = layer.attention.self
    b, n, _ = hidden_states.shape
    d = sa.attention_head_size
    first = hidden_states[:, :1]
    q = sa.query(first).view(b, 1, -1, d).transpose(1, 2)
    k = sa.key(hidden_states).view(b, n, -1, d).transpose(1, 2)
    v = sa.value(hidden_states).view(b, n, -1, d).transpose(1, 2)
    mask = attention_mask
    if mask is not None and mask.dim() == 4 and mask.shape[-2] == n:
        mask = mask[:, :, :1, :]
    att = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, scale=getattr(sa, "scaling", d ** -0.5))
    att = layer.attention.output(att.transpose(1, 2).reshape(b, 1, -1), first)
    return layer.output(layer.intermediate(att), att)


def _set_first_token(layer, on: bool) -> None:
    """Switch a layer between its own forward and :func:`_first_token_forward` (an instance
    attribute: parameters, state dict and saved checkpoints are unchanged)."""
    if on:
        layer.forward = types.MethodType(_first_token_forward, layer)
    elif "forward" in vars(layer):
        del layer.forward


def install_first_token_last_layer(model) -> bool:
    """On a BERT-like sequence classifier, compute the last layer for the first token only
    (all its head reads): the other positions' queries, attention outputs and feed-forward are
    skipped (a fifth of a 4-layer encoder's work). Installed only when probe batches, padded
    and unpadded, give the same logits as the full model (within 1e-5 in float32); returns
    whether it was installed."""
    import torch

    config = model.config
    layers = getattr(getattr(getattr(model, "base_model", None), "encoder", None), "layer", None)
    if (getattr(config, "model_type", "") not in _FIRST_TOKEN_TYPES or getattr(config, "is_decoder", False)
            or getattr(config, "add_cross_attention", False) or not isinstance(layers, torch.nn.ModuleList)
            or len(layers) == 0 or int(getattr(config, "vocab_size", 0) or 0) < 8):
        return False
    last = layers[-1]
    sa = getattr(getattr(last, "attention", None), "self", None)
    if sa is None or not all(hasattr(sa, a) for a in ("query", "key", "value", "attention_head_size")) \
            or not all(hasattr(last, a) for a in ("intermediate", "output")):
        return False
    param = next(model.parameters())
    ids = torch.randint(5, int(config.vocab_size), (3, 9), generator=torch.Generator().manual_seed(0))
    ids = ids.to(param.device)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    mask[2, 2:] = 0
    probes = [{"input_ids": ids, "attention_mask": mask}, {"input_ids": ids[:2]}]
    tol = 1e-5 if param.dtype == torch.float32 else 2e-2
    try:
        with torch.inference_mode():
            full = [model(**x).logits.float() for x in probes]
            _set_first_token(last, True)
            fast = [model(**x).logits.float() for x in probes]
    except Exception:  # noqa: BLE001 - any surprise in the layout: the full model stays
        _set_first_token(last, False)
        return False
    if all(torch.allclose(a, b, atol=tol, rtol=tol) for a, b in zip(full, fast)):
        return True
    _set_first_token(last, False)
    return False


