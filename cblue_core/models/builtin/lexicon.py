"""A gazetteer of typed terms: every occurrence of a term in a text (the train-dictionary
baselines), and the occurrences as per-character features for a network (the CMeIE lexicon).

As features, every term found marks its characters as the beginning, inside or end of a term of
its class, and the network learns how far to trust a match. A term annotated only in the text
being trained on would always match there, and the network would learn to trust matches
blindly; so while training, each text's features leave out the terms that only its own unit
(record or piece) contributed (:meth:`LexiconBuilder.own_only`): the leave-one-out lexicon, which
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
    terms: dict[str, list[int]] = field(default_factory=dict)   # term (its key) -> its class ids
    max_len: int = 25
    fold_case: bool = True      # terms are lower-cased keys and texts are matched lower-cased
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
        low = term_key(text) if self.fold_case else text
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
        return {"classes": self.classes, "max_len": self.max_len, "fold_case": self.fold_case,
                "terms": {t: cs for t, cs in sorted(self.terms.items())}}

    @classmethod
    def from_json(cls, raw: object) -> Lexicon:
        """A lexicon from its JSON; ValueError saying which field is wrong (a model folder may
        come from anyone)."""
        if not isinstance(raw, dict):
            raise ValueError("lexicon: expected a JSON object with classes, max_len and terms")
        classes, terms, max_len = raw.get("classes"), raw.get("terms"), raw.get("max_len")
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise ValueError("lexicon: classes must be a list of strings")
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < MIN_LEN:
            raise ValueError(f"lexicon: max_len must be a whole number of at least {MIN_LEN}")
        if not isinstance(terms, dict) or not all(
                isinstance(cs, list) and all(isinstance(c, int) and not isinstance(c, bool) for c in cs)
                for cs in terms.values()):
            raise ValueError("lexicon: terms must map each term to a list of class ids")
        if any(not 0 <= c < len(classes) for cs in terms.values() for c in cs):
            raise ValueError("lexicon: a term's class id is outside its classes")
        return cls(classes, {str(t): cs for t, cs in terms.items()}, max_len,
                   bool(raw.get("fold_case", True)))


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

