"""The CMeIE network: the span encoder with a multi-label span head, the pair head and the
auxiliary CMeEE entity head (training only); several of them as one (:class:`LogitAverage`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from ..spans import PointerHead, SpanConfig, SpanNet, span_scores


class RelNet(SpanNet):
    """SpanNet with a multi-label span head (``labels``), the pair head (``n_predicates``) and
    an optional auxiliary entity head (``aux_labels``, CMeEE types; training only)."""

    def __init__(self, cfg: SpanConfig, n_predicates: int, pair_dim: int,
                 aux_labels: Sequence[str] = (), pair_scores: bool = False):
        super().__init__(cfg)
        self.aux_labels = list(aux_labels)
        d = 2 * cfg.hidden
        self.pair = PairHead(d, pair_dim, n_predicates, len(cfg.labels) if pair_scores else 0)
        if cfg.head != "pointer":
            self.out = nn.Linear(cfg.span_dim, len(cfg.labels))     # sigmoid per label
        if self.aux_labels:
            if cfg.head == "pointer":
                self.aux_pointer = PointerHead(d, cfg.span_dim, len(self.aux_labels), cfg.max_span)
            else:
                self.aux_start = nn.Linear(d, cfg.span_dim)
                self.aux_end = nn.Linear(d, cfg.span_dim)
                self.aux_width = nn.Embedding(cfg.max_span, cfg.span_dim)
                self.aux_out = nn.Linear(cfg.span_dim, len(self.aux_labels) + 1)

    def aux_logits(self, h: torch.Tensor) -> torch.Tensor:
        if self.cfg.head == "pointer":
            return self.aux_pointer(h)
        return span_scores(h, self.aux_start, self.aux_end, self.aux_width, self.aux_out, self.drop,
                           self.cfg.max_span)


class PairHead(nn.Module):
    """Predicate scores of a (subject span, object span) pair: the boundary states of both
    spans, the mean state of the characters between them and a signed log-distance bucket,
    through a two-layer MLP; one sigmoid per predicate (none over 0.5: no relation)."""
    BUCKETS = 12

    def __init__(self, n_in: int, d: int, n_predicates: int, n_span_labels: int = 0):
        super().__init__()
        self.n_predicates = n_predicates
        self.n_span_labels = n_span_labels
        if n_span_labels:     # the span head's scores of both spans, as features
            self.subj_scores = nn.Linear(n_span_labels, d)
            self.obj_scores = nn.Linear(n_span_labels, d)
        self.subj = nn.Linear(2 * n_in, d)
        self.obj = nn.Linear(2 * n_in, d)
        self.ctx = nn.Linear(n_in, d)
        self.dist = nn.Embedding(2 * self.BUCKETS + 1, d)
        self.out = nn.Sequential(nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, n_predicates))

    @classmethod
    def bucket(cls, d: torch.Tensor) -> torch.Tensor:
        b = torch.log2(d.abs().float() + 1).floor().long().clamp(max=cls.BUCKETS)
        return torch.sign(d) * b + cls.BUCKETS

    def forward(self, h: torch.Tensor, pairs: torch.Tensor, span_scores: torch.Tensor | None = None
                ) -> torch.Tensor:
        """h (B, L, n_in); pairs (P, 5) rows ``(b, subj start, subj end, obj start, obj end)``
        (ends exclusive); span_scores (B, L, W, K) the span head's logits (detached: the pair
        loss trains the encoder through ``h`` only) -> (P, n_predicates) logits."""
        b, ss, se, os_, oe = pairs.unbind(1)
        cs = torch.cat([h.new_zeros(h.shape[0], 1, h.shape[2]), h.cumsum(1)], dim=1)
        lo = torch.minimum(se, oe)
        hi = torch.maximum(ss, os_)
        gap = (hi - lo).clamp(min=0)
        between = (cs[b, torch.maximum(hi, lo)] - cs[b, lo]) / gap.clamp(min=1).unsqueeze(1).float()
        x = (self.subj(torch.cat([h[b, ss], h[b, se - 1]], -1))
             + self.obj(torch.cat([h[b, os_], h[b, oe - 1]], -1))
             + self.ctx(between) + self.dist(self.bucket(os_ - ss)))
        if self.n_span_labels:
            if span_scores is None:
                raise ValueError("this pair head scores spans with the span head's logits: pass span_scores")
            sc = span_scores.detach()
            x = x + self.subj_scores(sc[b, ss, se - ss - 1]) + self.obj_scores(sc[b, os_, oe - os_ - 1])
        return self.out(x)


class LogitAverage(nn.Module):
    """Several CMeIE networks of the same sizes as one (a seed ensemble): each encodes the batch,
    and their span logits and pair logits are averaged. It answers what the predictor calls of a
    :class:`RelNet` (``encode``, ``span_logits``, ``pair``, ``cfg``)."""

    def __init__(self, nets: Sequence[RelNet]):
        super().__init__()
        if not nets:
            raise ValueError("an ensemble needs at least one network")
        self.nets = nn.ModuleList(nets)
        self.cfg = nets[0].cfg

    @property
    def members(self) -> list[RelNet]:
        return cast(list[RelNet], list(self.nets))

    @property
    def first(self) -> RelNet:
        return self.members[0]

    def encode(self, chars: torch.Tensor, bigrams: torch.Tensor, lengths: torch.Tensor,
               lexicon: torch.Tensor | None = None) -> torch.Tensor:
        """(networks, B, L, d): every network's states."""
        return torch.stack([n.encode(chars, bigrams, lengths, lexicon) for n in self.members])

    def span_logits(self, states: torch.Tensor) -> torch.Tensor:
        return torch.stack([n.span_logits(h) for n, h in zip(self.members, states)]).mean(0)

    def pair(self, states: torch.Tensor, rows: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        return torch.stack([n.pair(h, rows, logits) for n, h in zip(self.members, states)]).mean(0)
