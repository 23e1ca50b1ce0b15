"""Packing and masking: pieces fit, sequences are well formed, masks never touch special tokens."""
from __future__ import annotations

import doctest

import torch

from cblue_core.models.encoder import data as D

SP = D.Specials(pad=0, unk=1, cls=2, sep=3, mask=4, first_normal=5, vocab_size=50)


def test_doctests():
    assert doctest.testmod(D).failed == 0


def test_pack_keeps_every_piece_once_within_max_len():
    pieces = [[5 + (i % 40)] * (1 + i % 13) for i in range(200)]
    seqs = D.epoch_sequences(pieces, 32, SP, seed=0, epoch=0)
    assert all(len(ids) <= 32 and ids[0] == SP.cls and ids[-1] == SP.sep for ids, _ in seqs)
    assert all(len(ids) == len(tt) for ids, tt in seqs)
    assert sum(sum(t >= SP.first_normal for t in ids) for ids, _ in seqs) == sum(map(len, pieces))
    # seeded: the same pass packs the same way, another pass another way
    assert D.epoch_sequences(pieces, 32, SP, 0, 0) == seqs != D.epoch_sequences(pieces, 32, SP, 0, 1)


def test_split_ids_fits_and_keeps_everything():
    ids = list(range(5, 45)) * 3
    parts = D.split_ids(ids, 16, frozenset({20}))
    assert all(0 < len(p) <= 16 for p in parts) and [t for p in parts for t in p] == ids


def test_mask_tokens():
    seqs = [([2] + [5 + i % 40 for i in range(100)] + [3], [0] * 102), ([2, 6, 7, 3], [0] * 4)]
    ids, _, attn = D.collate(seqs, SP.pad)
    assert ids.shape == (2, 102) and int(attn[1].sum()) == 4 and int(ids[1, 4:].sum()) == 0
    masked, labels = D.mask_tokens(ids, SP, 0.15, torch.Generator().manual_seed(0))
    chosen = labels != -100
    assert torch.equal(labels[chosen], ids[chosen])
    assert not chosen[ids < SP.first_normal].any()                 # [CLS] [SEP] [PAD] never
    assert torch.equal(masked[~chosen], ids[~chosen])
    assert 5 <= int(chosen.sum()) <= 30
    again = D.mask_tokens(ids, SP, 0.15, torch.Generator().manual_seed(0))
    assert torch.equal(again[0], masked) and torch.equal(again[1], labels)
    big = torch.randint(5, 50, (64, 128))
    m, lab = D.mask_tokens(big, SP, 0.15, torch.Generator().manual_seed(1))
    sel = lab != -100
    assert abs(sel.float().mean().item() - 0.15) < 0.01
    assert abs((m[sel] == SP.mask).float().mean().item() - 0.8) < 0.03
