"""From the CMeIE networks' probabilities to triples: candidate spans, the predicates of their
pairs, one subject per (predicate, object), types from the schemas."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

import torch

from ....annotation.validation import combined_for
from ....records import Example, Triple
from .data import SUBJ, TYPE, Schemas


class PairHit(NamedTuple):
    """One predicate of one candidate (subject, object) pair, with the scores behind it."""

    subject: str
    predicate: str
    object: str
    score: float                # the pair head's probability of the predicate
    object_type: str | None     # the type the span head prefers among the predicate's schemas
    subject_score: float        # the span head's probabilities of the two candidates
    object_score: float


# (object threshold, subject threshold, pair threshold)
Thresholds = tuple[float, float, float]


class RelationDecoding:
    """The decoding of the CMeIE extractors (this module's and :mod:`.encoder_relations`'s):
    candidates from the span head's probabilities, the predicates of their pairs over
    ``pair_threshold`` (:class:`PairHit`), then triples: each (predicate, object) keeps its best
    subject, types come from the schemas. A subclass gives ``scored(texts)``: per text its hits
    and its candidate subjects and objects (mention -> probability, for display)."""

    max_subjects = 8      # candidates per text (or window), best first (an untrained model finds everything)
    max_objects = 40
    labels: list[str]

    def init_decoding(self, schemas: Schemas, predicates: Sequence[str], threshold: float,
                      subject_threshold: float, pair_threshold: float) -> None:
        self.schemas = schemas
        self.predicates = list(predicates)
        self.threshold, self.subject_threshold, self.pair_threshold = threshold, subject_threshold, pair_threshold
        self.subj_k = self.labels.index(SUBJ)
        self.obj_ks = [k for k, l in enumerate(self.labels) if l != SUBJ]
        self.type_ks = {l[len(TYPE):]: k for k, l in enumerate(self.labels) if l.startswith(TYPE)}
        self.type_names, self.type_cols = list(self.type_ks), list(self.type_ks.values())
        # (n_predicates, object types): the types each predicate's schemas allow
        self.allowed_types = torch.tensor([[o in {t for _, t in schemas.by_pred.get(p, [])} for o in self.type_names]
                                           for p in self.predicates], dtype=torch.bool
                                          ).reshape(len(self.predicates), len(self.type_names))

    @property
    def thresholds(self) -> Thresholds:
        return self.threshold, self.subject_threshold, self.pair_threshold

    def candidates(self, probs: torch.Tensor, n: int
                   ) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, float]]]:
        """Candidate subjects and objects ``(start, end, probability)`` of one text's (L, W, K)
        span probabilities over its first ``n`` positions."""
        S = top_spans(probs[:, :, self.subj_k], n, self.max_subjects, self.subject_threshold)
        O = top_spans(probs[..., self.obj_ks].max(-1).values, n, self.max_objects, self.threshold)
        return S, O

    def pair_hits(self, pairs: Sequence[tuple[tuple[str, float], tuple[str, float]]], pair_probs: torch.Tensor,
                  obj_probs: torch.Tensor) -> list[list[PairHit]]:
        """Per candidate pair, its predicates over ``pair_threshold``: ``pairs`` are ``((subject,
        probability), (object, probability))``, ``pair_probs`` the pair head's (P, n_predicates)
        and ``obj_probs`` the span head's (P, K) probabilities of each object span. The object
        type of a hit is the one the span head prefers among those its predicate's schemas allow
        (tensors: an untrained model may give every pair every predicate)."""
        out: list[list[PairHit]] = [[] for _ in pairs]
        found = (pair_probs > self.pair_threshold).nonzero().tolist()
        if not found:
            return out
        allowed = self.allowed_types                                        # (n_predicates, T)
        tp = obj_probs[:, self.type_cols].unsqueeze(1).expand(-1, allowed.shape[0], -1)
        best = tp.masked_fill(~allowed, -1.0).argmax(-1).tolist() if self.type_cols else None
        some = allowed.any(-1).tolist()
        probs = pair_probs.tolist()
        for r, k in found:
            (subj, ps), (obj, po) = pairs[r]
            otype = self.type_names[best[r][k]] if best is not None and some[k] else None
            out[r].append(PairHit(subj, self.predicates[k], obj, probs[r][k], otype, ps, po))
        return out

    def decode(self, text: str, hits: Iterable[PairHit], thresholds: Thresholds | None = None
               ) -> tuple[list[Triple], list[float]]:
        """The triples of a text and their scores from its hits over ``thresholds`` (default the
        model's: hits found at lower ones give what those would have found)."""
        t_obj, t_subj, t_pair = thresholds or self.thresholds
        best: dict[tuple[str, str, str], tuple[float, str | None]] = {}
        for h in hits:
            key = (h.subject, h.predicate, h.object)
            if (h.score > t_pair and h.subject_score > t_subj and h.object_score > t_obj
                    and h.score > best.get(key, (-1.0,))[0]):
                best[key] = (h.score, h.object_type)
        triples, scores = [], []
        for (subj, pred, obj), (p, otype) in one_subject_each(best):
            types = self.schemas.types(pred, otype)
            if types is not None:
                triples.append(Triple(subj, pred, obj, types[0], types[1], combined_for(text, subj, obj)))
                scores.append(round(p, 4))
        return triples, scores

    def scored(self, texts: Sequence[str]) -> list[tuple[list[PairHit], dict[str, float], dict[str, float]]]:
        raise NotImplementedError

    def extract(self, texts: Sequence[str]) -> list[tuple[list[Triple], dict]]:
        """Per text: its triples, and the candidates and scores behind them (for display)."""
        out = []
        for text, (hits, subjects, objects) in zip(texts, self.scored(texts)):
            triples, scores = self.decode(text, hits)
            out.append((triples, {"triple_scores": scores,
                                  "subjects": [[m, round(p, 4)] for m, p in subjects.items()],
                                  "objects": [[m, round(p, 4)] for m, p in objects.items()]}))
        return out

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        return [Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2, triples=t, meta=m)
                for ex, (t, m) in zip(batch, self.extract([e.text for e in batch]))]


def best_mentions(found: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Mention -> its best probability, best first."""
    best: dict[str, float] = {}
    for m, p in found:
        best[m] = max(p, best.get(m, -1.0))
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))


def one_subject_each(scored: dict[tuple[str, str, str], tuple]) -> list:
    """Best first, and only the best-scoring subject of each (predicate, object): the pair head
    scores pairs independently, so an object would otherwise join every subject of a text, while
    93% of the training triples' (predicate, object) have a single subject in their text."""
    seen, out = set(), []
    for (subj, pred, obj), v in sorted(scored.items(), key=lambda kv: -kv[1][0]):
        if (pred, obj) not in seen:
            seen.add((pred, obj))
            out.append(((subj, pred, obj), v))
    return out


def top_spans(scores: torch.Tensor, n: int, k: int, threshold: float | None = None,
              exclude: AbstractSet[tuple[int, int]] = frozenset()) -> list[tuple[int, int, float]]:
    """The ``k`` best spans ``(start, end, score)`` of one text's (L, W) span scores, those
    running past its ``n`` characters and those in ``exclude`` left out; only scores over
    ``threshold`` when one is given."""
    L, W = scores.shape
    end = torch.arange(L).unsqueeze(1) + torch.arange(W).unsqueeze(0) + 1
    sc = scores.masked_fill(end > n, float("-inf")).flatten()
    if threshold is not None:
        sc = sc.masked_fill(sc <= threshold, float("-inf"))
    vals, idx = sc.topk(min(k + len(exclude), sc.numel()))
    out: list[tuple[int, int, float]] = []
    for v, j in zip(vals.tolist(), idx.tolist()):
        if v == float("-inf") or len(out) >= k:
            break
        span = (j // W, j // W + j % W + 1)
        if span not in exclude:
            out.append((span[0], span[1], v))
    return out
