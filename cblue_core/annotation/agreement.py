"""Agreement between two annotators, and adjudication of their differences.

:func:`span_agreement` compares the items of aligned annotations (entity spans by exact
(start, end, type); CMeIE triples by (subject, predicate, object), typed by predicate; CDN terms)
and gives precision and recall of ``b`` against ``a`` (F1 is symmetric). Labels are compared
with :func:`cohen_kappa`, which corrects raw agreement for the agreement expected by chance.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..records import Span, Triple
from .model import Annotation


@dataclass(frozen=True)
class PRF:
    """Matched items (``tp``) out of ``n_a`` items of annotator A and ``n_b`` of annotator B."""

    tp: int
    n_a: int
    n_b: int

    @property
    def precision(self) -> float:
        """Share of B's items that A has too."""
        return self.tp / self.n_b if self.n_b else (1.0 if not self.n_a else 0.0)

    @property
    def recall(self) -> float:
        """Share of A's items that B has too."""
        return self.tp / self.n_a if self.n_a else (1.0 if not self.n_b else 0.0)

    @property
    def f1(self) -> float:
        total = self.n_a + self.n_b
        return 2 * self.tp / total if total else 1.0

    def __getitem__(self, name: str) -> Any:  # per_type["NAME"]["f1"] reads like a dict
        return getattr(self, name)

    def to_dict(self) -> dict[str, float | int]:
        return {"tp": self.tp, "n_a": self.n_a, "n_b": self.n_b, "precision": self.precision,
                "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class Agreement:
    f1: float
    precision: float
    recall: float
    per_type: dict[str, PRF]
    examples: int                                  # examples compared
    per_example: tuple[float, ...] = ()            # F1 of each example (1.0 when both are empty)
    disagreements: tuple[int, ...] = ()            # positions of the examples that differ
    counts: PRF = field(default_factory=lambda: PRF(0, 0, 0))


def items(a: Annotation) -> set[tuple[str, Hashable]]:
    """(type, key) of every item of an annotation, duplicates collapsed."""
    out: set[tuple[str, Hashable]] = set()
    for s in a.spans:
        out.add((s.type, ("span", s.start, s.end, s.type)))
    for t in a.triples:
        out.add((t.predicate, ("triple", t.subject, t.predicate, t.object)))
    for term in a.terms:
        out.add(("term", ("term", term)))
    return out


def span_agreement(a: Sequence[Annotation], b: Sequence[Annotation]) -> Agreement:
    """Item-level agreement of annotator B with annotator A over aligned lists of annotations."""
    if len(a) != len(b):
        raise ValueError(f"the two annotators' lists are not aligned: {len(a)} vs {len(b)} examples")
    tp = na = nb = 0
    by_type: dict[str, list[int]] = {}
    per_example, differ = [], []
    for pos, (x, y) in enumerate(zip(a, b)):
        ia, ib = items(x), items(y)
        both = ia & ib
        tp, na, nb = tp + len(both), na + len(ia), nb + len(ib)
        for typ, _ in ia:
            by_type.setdefault(typ, [0, 0, 0])[1] += 1
        for typ, _ in ib:
            by_type.setdefault(typ, [0, 0, 0])[2] += 1
        for typ, _ in both:
            by_type[typ][0] += 1
        per_example.append(PRF(len(both), len(ia), len(ib)).f1)
        if ia != ib:
            differ.append(pos)
    total = PRF(tp, na, nb)
    return Agreement(total.f1, total.precision, total.recall,
                     {t: PRF(*v) for t, v in sorted(by_type.items())}, len(a), tuple(per_example),
                     tuple(differ), total)


def cohen_kappa(labels_a: Sequence[Hashable], labels_b: Sequence[Hashable]) -> float:
    """Cohen's kappa: (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the
    agreement expected from each annotator's label frequencies. 1.0 when both annotators use
    one and the same label throughout (p_e = 1)."""
    if len(labels_a) != len(labels_b):
        raise ValueError(f"the two label lists are not aligned: {len(labels_a)} vs {len(labels_b)}")
    n = len(labels_a)
    if n == 0:
        raise ValueError("no labels to compare")
    p_o = sum(x == y for x, y in zip(labels_a, labels_b)) / n
    ca, cb = Counter(labels_a), Counter(labels_b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e == 1.0:
        return 1.0
    return (p_o - p_e) / (1 - p_e)


def _span_key(item: Any) -> tuple:
    if isinstance(item, Span):
        return ("span", item.start, item.end, item.type)
    if isinstance(item, Triple):
        return ("triple", item.subject, item.predicate, item.object)
    if isinstance(item, str):
        return ("term", item)
    if isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], int):
        return ("span", item[0], item[1], item[2])
    if isinstance(item, tuple) and len(item) == 3:
        return ("triple", item[0], item[1], item[2])
    raise ValueError(f"cannot tell which item {item!r} is: give a Span, a Triple, a term, "
                     "(start, end, type) or (subject, predicate, object)")


def adjudicate(a: Annotation, b: Annotation, keep: Mapping[Any, Any], *,
               undecided: str = "drop") -> Annotation:
    """The adjudicated annotation, item by item.

    Items both annotators have are kept unless ``keep[item]`` says otherwise; an item only one
    of them has is kept when ``keep[item]`` says so. ``keep`` maps an item (a Span or
    ``(start, end, type)``, a Triple or ``(subject, predicate, object)``, a term string, or
    ``"label"``) to True / False (keep it or not) or to ``"a"`` / ``"b"`` (keep it exactly when
    that annotator has it; for ``"label"``: take that annotator's label). Disputed items without
    a choice are dropped (``undecided="drop"``), kept (``"keep"``) or refused (``"error"``);
    differing labels need a choice unless ``undecided`` is "keep" (then A's label is taken).
    """
    if undecided not in ("drop", "keep", "error"):
        raise ValueError("undecided must be 'drop', 'keep' or 'error'")
    choices = {("label",) if k == "label" else _span_key(k): v for k, v in keep.items()}
    for v in choices.values():
        if v not in (True, False, "a", "b"):
            raise ValueError(f"a choice must be True, False, 'a' or 'b', not {v!r}")

    def pick(key: tuple, in_a: bool, in_b: bool) -> bool:
        if key in choices:
            v = choices[key]
            return in_a if v == "a" else in_b if v == "b" else bool(v)
        if in_a and in_b:
            return True
        if undecided == "error":
            raise ValueError(f"no choice for the disputed item {key[1:]}")
        return undecided == "keep"

    def merge(xs: Sequence, ys: Sequence, kind: str) -> list:
        ka = {_span_key(x) for x in xs}
        kb = {_span_key(y) for y in ys}
        out, seen = [], set()
        for item in list(xs) + list(ys):
            k = _span_key(item)
            if k not in seen:
                seen.add(k)
                if pick(k, k in ka, k in kb):
                    out.append(item)
        for k, choice in choices.items():
            if k[0] == kind and k not in ka and k not in kb and choice is True:
                raise ValueError(f"cannot keep {k[1:]}: neither annotator has it")
        return out

    if a.label == b.label:
        label = a.label
        if ("label",) in choices and choices[("label",)] is False:
            label = None
    elif ("label",) in choices and choices[("label",)] in ("a", "b"):
        label = a.label if choices[("label",)] == "a" else b.label
    elif undecided == "keep":
        label = a.label
    else:
        raise ValueError(f"the labels differ ({a.label!r} / {b.label!r}): choose keep['label'] = 'a' or 'b'")
    spans = merge(a.spans, b.spans, "span")
    triples = merge(a.triples, b.triples, "triple")
    terms = merge(a.terms, b.terms, "term")
    return Annotation(tuple(spans), tuple(triples), label, tuple(terms))


@dataclass(frozen=True)
class DisputedItem:
    """An item only one of two annotators has: a span, a triple or a term."""

    item: Span | Triple | str
    in_a: bool                    # True: only A has it; False: only B
    shown: str                    # the item in words, for a checkbox


def _shown(item: Span | Triple | str, text: str) -> str:
    if isinstance(item, Span):
        return f"{item.type} {text[item.start:item.end]} [{item.start},{item.end})"
    if isinstance(item, Triple):
        return f"({item.subject}, {item.predicate}, {item.object})"
    return str(item)


def disputed_items(a: Annotation, b: Annotation, text: str) -> list[DisputedItem]:
    """The spans, triples and terms only one of ``a`` and ``b`` has (A's first, each once), as
    an adjudicator decides on them; items both have are not disputed. Items are compared as
    :func:`adjudicate` compares them (spans by offsets and type, triples by their three parts).

    >>> a = Annotation((Span(0, 2, "dis"), Span(3, 4, "sym")))
    >>> b = Annotation((Span(0, 2, "dis"), Span(3, 4, "bod")))
    >>> [(d.shown, d.in_a) for d in disputed_items(a, b, "感冒 咳")]
    [('sym 咳 [3,4)', True), ('bod 咳 [3,4)', False)]
    """
    out = []
    pairs: tuple[tuple[Sequence[Span | Triple | str], Sequence[Span | Triple | str]], ...] = (
        (a.spans, b.spans), (a.triples, b.triples), (a.terms, b.terms))
    for xs, ys in pairs:
        ka = {_span_key(x) for x in xs}
        kb = {_span_key(y) for y in ys}
        seen: set[tuple] = set()
        for item in list(xs) + list(ys):
            k = _span_key(item)
            if k in seen or (k in ka and k in kb):
                continue
            seen.add(k)
            out.append(DisputedItem(item, k in ka, _shown(item, text)))
    return out


@dataclass(frozen=True)
class AnnotatorComparison:
    """Two annotators on the examples both saved: label agreement (kappa and raw) for label
    tasks, item agreement for the others, and the examples where they differ."""

    common: tuple[int, ...]                # example indices both annotators saved
    differ: tuple[int, ...]                # those where their annotations differ
    kappa: float | None = None             # label tasks
    raw_agreement: float | None = None     # label tasks
    items: Agreement | None = None         # span, triple and term tasks


def compare_annotators(a: Mapping[int, Annotation], b: Mapping[int, Annotation], *,
                       labels: bool) -> AnnotatorComparison:
    """Compare two annotators' saved annotations (example index -> annotation) on the examples
    both have: by label (``labels``) or by item.

    >>> x, y = Annotation(label="1"), Annotation(label="0")
    >>> c = compare_annotators({0: x, 1: x, 5: x}, {1: x, 5: y}, labels=True)
    >>> c.common, c.differ, c.raw_agreement
    ((1, 5), (5,), 0.5)
    """
    common = tuple(sorted(set(a) & set(b)))
    if not common:
        return AnnotatorComparison((), ())
    if labels:
        la, lb = [a[i].label for i in common], [b[i].label for i in common]
        same = sum(x == y for x, y in zip(la, lb))
        return AnnotatorComparison(common, tuple(i for i, x, y in zip(common, la, lb) if x != y),
                                   kappa=cohen_kappa(la, lb), raw_agreement=same / len(common))
    ag = span_agreement([a[i] for i in common], [b[i] for i in common])
    return AnnotatorComparison(common, tuple(common[p] for p in ag.disagreements), items=ag)

