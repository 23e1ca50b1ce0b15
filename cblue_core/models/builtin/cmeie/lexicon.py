"""A gazetteer of typed medical mentions, matched in a text as per-character features.

The relation data is small (under 3,000 training texts), so a mention seen once in training or
annotated in CMeEE is evidence worth handing to the encoder directly: every lexicon term found in
a text marks its characters as the beginning, inside or end of a term of its class (CMeEE entity
types, CMeIE subject and object types). The network learns how far to trust a match.

A term annotated only in the text being trained on would always match there, and the network
would learn to trust matches blindly; so while training, each text's features leave out the
terms that only its own unit (record or piece) contributed: the leave-one-out lexicon, which
sees a text as the model will see an unseen one. At prediction time every term counts.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch

MIN_LEN = 2          # single characters match everywhere: no evidence
POSITIONS = 3        # B, I, E

Term = tuple[str, int]      # (lower-cased term, class id)


def term_key(text: str) -> str:
    return text.lower()


@dataclass
class Lexicon:
    classes: list[str]
    terms: dict[str, list[int]] = field(default_factory=dict)   # term -> its class ids
    max_len: int = 25
    # first character -> the lengths of the terms it starts: the only substrings worth looking up
    _lengths: dict[str, list[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lengths: dict[str, set[int]] = {}
        for t in self.terms:
            if MIN_LEN <= len(t) <= self.max_len:
                lengths.setdefault(t[0], set()).add(len(t))
        self._lengths = {c: sorted(ls) for c, ls in lengths.items()}

    @property
    def n_features(self) -> int:
        return POSITIONS * len(self.classes)

    def matches(self, text: str, exclude: frozenset[Term] | set[Term] = frozenset()
                ) -> list[tuple[int, int, int]]:
        """Every ``(start, end, class id)`` of a lexicon term in ``text`` (not those in ``exclude``)."""
        low = term_key(text)
        n, out = len(low), []
        for i, first in enumerate(low):
            for w in self._lengths.get(first, ()):
                if i + w > n:
                    break
                term = low[i:i + w]
                for c in self.terms.get(term, ()):
                    if (term, c) not in exclude:
                        out.append((i, i + w, c))
        return out

    def feature_ids(self, text: str, exclude: frozenset[Term] | set[Term] = frozenset()
                    ) -> list[tuple[int, int]]:
        """``(position, feature id)`` pairs of ``text``: B at a match's first character, E at its
        last, I between, per class."""
        out = set()
        for i, j, c in self.matches(text, exclude):
            base = POSITIONS * c
            out.add((i, base))
            out.add((j - 1, base + 2))
            out.update((k, base + 1) for k in range(i + 1, j - 1))
        return sorted(out)

    def features(self, texts: Sequence[str], length: int | None = None) -> torch.Tensor:
        """(B, L, n_features) 0/1 features of a batch, L the longest text unless ``length``."""
        return feature_tensor([self.feature_ids(t) for t in texts],
                              length or max(1, max(len(t) for t in texts)), self.n_features)

    def to_json(self) -> dict:
        return {"classes": self.classes, "max_len": self.max_len,
                "terms": {t: cs for t, cs in sorted(self.terms.items())}}

    @classmethod
    def from_json(cls, raw: dict) -> Lexicon:
        classes = list(raw["classes"])
        terms = {str(t): [int(c) for c in cs] for t, cs in raw["terms"].items()}
        if any(not 0 <= c < len(classes) for cs in terms.values() for c in cs):
            raise ValueError("lexicon: a term's class id is outside its classes")
        return cls(classes, terms, int(raw["max_len"]))


def feature_tensor(ids: Sequence[Sequence[tuple[int, int]]], length: int, n_features: int) -> torch.Tensor:
    x = torch.zeros(len(ids), length, n_features)
    for b, pairs in enumerate(ids):
        if pairs:
            pos, feat = zip(*((p, f) for p, f in pairs if p < length))
            x[b, list(pos), list(feat)] = 1.0
    return x


class LexiconBuilder:
    """Counts, per (term, class), the units (records, pieces) that annotate it, so that a unit's
    own terms can be left out of its features (:meth:`own_only`)."""

    def __init__(self, max_len: int):
        self.max_len = max_len
        self.classes: list[str] = []
        self._class_id: dict[str, int] = {}
        self.counts: Counter[Term] = Counter()

    def unit_terms(self, mentions: Iterable[tuple[str, str]]) -> frozenset[Term]:
        """The (term, class id) set of one unit's ``(mention, class name)`` annotations."""
        out = set()
        for text, cls in mentions:
            if MIN_LEN <= len(text) <= self.max_len:
                if cls not in self._class_id:
                    self._class_id[cls] = len(self.classes)
                    self.classes.append(cls)
                out.add((term_key(text), self._class_id[cls]))
        return frozenset(out)

    def add(self, mentions: Iterable[tuple[str, str]]) -> frozenset[Term]:
        """Counts one unit's annotations; returns its term set (for :meth:`own_only`)."""
        terms = self.unit_terms(mentions)
        self.counts.update(terms)
        return terms

    def own_only(self, terms: frozenset[Term]) -> frozenset[Term]:
        """The terms of a unit that no other unit annotates: those its features leave out."""
        return frozenset(t for t in terms if self.counts[t] <= 1)

    def lexicon(self) -> Lexicon:
        terms: dict[str, list[int]] = {}
        for (t, c), n in sorted(self.counts.items()):
            if n > 0:
                terms.setdefault(t, []).append(c)
        return Lexicon(list(self.classes), terms, self.max_len)


def training_lexicon(records: Sequence, item_records: Sequence[int], item_texts: Sequence[str],
                     aux: Sequence[tuple[str, Sequence[tuple[int, int, int]]]], aux_labels: Sequence[str],
                     max_len: int) -> tuple[Lexicon, tuple[list, list]]:
    """The lexicon of the CMeIE training records' subjects and objects (classes ``CMeIE subject
    <type>``, ``CMeIE object <type>``) and of the auxiliary CMeEE pieces' entities (``CMeEE
    <type>``; label ids from 1 as :func:`.data.aux_items` gives them), with the leave-one-out
    features of each main item (``item_records[i]``: its record) and each auxiliary piece."""
    b = LexiconBuilder(max_len)
    rec_terms = [b.add(m for t in e.triples for m in ((t.subject, f"CMeIE subject {t.subject_type}"),
                                                      (t.object, f"CMeIE object {t.object_type}")))
                 for e in records]
    aux_terms = [b.add((text[s:e], f"CMeEE {aux_labels[k - 1]}") for s, e, k in spans) for text, spans in aux]
    lexicon = b.lexicon()
    own = [b.own_only(t) for t in rec_terms]
    main_ids = [lexicon.feature_ids(text, own[r]) for text, r in zip(item_texts, item_records)]
    aux_ids = [lexicon.feature_ids(text, b.own_only(t)) for (text, _), t in zip(aux, aux_terms)]
    return lexicon, (main_ids, aux_ids)
