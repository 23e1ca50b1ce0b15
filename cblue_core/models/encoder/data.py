"""From texts to masked batches: token ids, pieces that fit, packed sequences, dynamic masking.

Every step is a pure function of its inputs and a seed, so that a resumed run sees exactly the
batches and masks an uninterrupted one would have seen.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

# Where a long text is preferably cut: after a sentence or clause end.
BREAKS = "。；！？;!?，,"


@dataclass(frozen=True)
class Specials:
    pad: int
    unk: int
    cls: int
    sep: int
    mask: int
    first_normal: int     # ids below this are special tokens
    vocab_size: int


def specials_of(tokenizer) -> Specials:
    t = tokenizer
    ids = [t.pad_token_id, t.unk_token_id, t.cls_token_id, t.sep_token_id, t.mask_token_id]
    return Specials(pad=ids[0], unk=ids[1], cls=ids[2], sep=ids[3], mask=ids[4],
                    first_normal=max(ids) + 1, vocab_size=len(t))


def split_ids(ids: Sequence[int], limit: int, break_ids: frozenset[int]) -> list[list[int]]:
    """``ids`` cut into pieces of at most ``limit`` tokens, each cut after the last break token
    of its window when there is one (else hard at ``limit``).

    >>> split_ids([1, 2, 9, 3, 4, 5, 9, 6], 4, frozenset({9}))
    [[1, 2, 9], [3, 4, 5, 9], [6]]
    """
    out, start = [], 0
    while len(ids) - start > limit:
        window = ids[start:start + limit]
        cut = max((i + 1 for i, t in enumerate(window) if t in break_ids), default=limit)
        out.append(list(window[:cut]))
        start += cut
    if start < len(ids):
        out.append(list(ids[start:]))
    return out


def encode(tokenizer, texts: Sequence[str], max_len: int) -> list[list[int]]:
    """Token ids (no special tokens) of ``texts``, long ones split so that each piece fits a
    sequence of ``max_len`` with its [CLS] and [SEP]."""
    breaks = frozenset(i for i in tokenizer.convert_tokens_to_ids(list(BREAKS)) if i != tokenizer.unk_token_id)
    out: list[list[int]] = []
    batch = 2048
    limit, tokenizer.model_max_length = tokenizer.model_max_length, 10 ** 9   # we split; no warning
    try:
        for i in range(0, len(texts), batch):
            enc = tokenizer(list(texts[i:i + batch]), add_special_tokens=False)["input_ids"]
            for ids in enc:
                if ids:
                    out.extend(split_ids(ids, max_len - 2, breaks))
    finally:
        tokenizer.model_max_length = limit
    return out


def pack(pieces: Sequence[Sequence[int]], order: Sequence[int], max_len: int, sp: Specials
         ) -> list[tuple[list[int], list[int]]]:
    """Pieces in ``order`` packed greedily into ``[CLS] a [SEP] b [SEP] ...`` sequences of at most
    ``max_len`` tokens; token types alternate 0/1 by piece (so both segment embeddings learn).
    Returns ``(input_ids, token_type_ids)`` per sequence.

    >>> sp = Specials(0, 1, 2, 3, 4, 5, 10)
    >>> pack([[5, 6], [7], [8, 9, 9]], [0, 1, 2], 6, sp)
    [([2, 5, 6, 3, 7, 3], [0, 0, 0, 0, 1, 1]), ([2, 8, 9, 9, 3], [0, 0, 0, 0, 0])]
    """
    seqs: list[tuple[list[int], list[int]]] = []
    ids, types = [sp.cls], [0]
    n_in = 0
    for k in order:
        piece = pieces[k]
        if n_in and len(ids) + len(piece) + 1 > max_len:
            seqs.append((ids, types))
            ids, types, n_in = [sp.cls], [0], 0
        seg = n_in % 2
        ids += [*piece, sp.sep]
        types += [seg] * (len(piece) + 1)
        n_in += 1
    if n_in:
        seqs.append((ids, types))
    return seqs


def epoch_sequences(pieces: Sequence[Sequence[int]], max_len: int, sp: Specials, seed: int,
                    epoch: int) -> list[tuple[list[int], list[int]]]:
    """The packed sequences of one pass over the training pieces, in a seeded order."""
    order = np.random.RandomState((seed * 1000 + epoch) % (2 ** 32)).permutation(len(pieces))
    return pack(pieces, order.tolist(), max_len, sp)


def collate(seqs: Sequence[tuple[list[int], list[int]]], pad: int
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(input_ids, token_type_ids, attention_mask)``, padded to the longest sequence."""
    width = max(len(ids) for ids, _ in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    types = torch.zeros((len(seqs), width), dtype=torch.long)
    attn = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (ids, tt) in enumerate(seqs):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        types[i, :len(tt)] = torch.tensor(tt)
        attn[i, :len(ids)] = 1
    return input_ids, types, attn


def mask_tokens(input_ids: torch.Tensor, sp: Specials, prob: float, gen: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's dynamic masking: each ordinary token is chosen with probability ``prob`` (at least
    one per batch); of those 80% become [MASK], 10% a random ordinary token, 10% stay. Returns
    ``(masked inputs, labels)`` with labels -100 where nothing is predicted."""
    normal = input_ids >= sp.first_normal
    normal |= input_ids == sp.unk        # [UNK] is text too: predicted like any character
    chosen = (torch.rand(input_ids.shape, generator=gen) < prob) & normal
    if not chosen.any() and normal.any():
        chosen.view(-1)[normal.view(-1).nonzero()[0]] = True
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    r = torch.rand(input_ids.shape, generator=gen)
    random_ids = torch.randint(sp.first_normal, sp.vocab_size, input_ids.shape, generator=gen)
    inputs = input_ids.clone()
    inputs[chosen & (r < 0.8)] = sp.mask
    swap = chosen & (r >= 0.8) & (r < 0.9)
    inputs[swap] = random_ids[swap]
    return inputs, labels
