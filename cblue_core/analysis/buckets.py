"""Bucketed analysis in the style of ExplainaBoard: F1 (with a bootstrap interval) per bucket of
an attribute of entities, triples or sentences.

Features are declared as data (:data:`SPAN_FEATURES`, :data:`EXAMPLE_FEATURES`): each names how
to compute one attribute and how to cut it into buckets. A span feature is computed for gold
spans (a found one is a true positive, a missed one a false negative) and for predicted spans
(a spurious one is a false positive in the bucket of its own attribute). An example feature puts
every item of the example into the example's bucket. Training data, where given, adds the
frequency of a mention in the training set (0 = out of vocabulary) and the consistency of its
label there; for triples, whether the triple is in the training set.

Relations (:func:`relation_buckets`) score triples as the task's scorer compares them (its
normalisation, :data:`TRIPLE_KEYS`), per triples in the example, text length, nesting (an
argument inside another argument of the example) and presence in the train split.

Wherever the run's model declares its training records, every kind adds the example feature
:data:`SEEN_FEATURE`: whether the example was among them (seen) or not (unseen).

Only buckets holding gold items are returned: a bucket of spurious predictions alone has no
score to speak of (F1 0 over n=0).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..metrics.bootstrap import bootstrap_interval
from ..metrics.cblue import cmeie_normalise
from ..metrics.types import ExampleStats
from ..records import Example, Span, Triple
from ..tasks import TaskSpec


@dataclass(frozen=True)
class BucketScore:
    feature: str
    bucket: str
    order: int
    tp: int
    fp: int
    fn: int
    examples: int
    f1: float
    low: float
    high: float

    @property
    def support(self) -> int:
        return self.tp + self.fn


@dataclass
class TrainIndex:
    """Mention statistics of a training split: how often, and with which labels; and how often
    each example label occurs (classification and pair tasks)."""

    labels: dict[str, Counter]
    example_labels: Counter = field(default_factory=Counter)

    @classmethod
    def build(cls, train: list[Example]) -> TrainIndex:
        labels: dict[str, Counter] = defaultdict(Counter)
        for ex in train:
            for s in ex.spans:
                labels[s.text][s.type] += 1
            for t in ex.turns:
                for s in t.spans:
                    labels[s.text][s.type] += 1
        return cls(dict(labels), Counter(ex.label for ex in train))

    @classmethod
    def from_counts(cls, mentions: Iterable[tuple[str, str, int]],
                    example_labels: Mapping[str | None, int]) -> TrainIndex:
        """From counts a query gave ((mention, type, n) of the gold spans; n per example label),
        without decoding the split's records (1.8 s for CMeEE's 15,000)."""
        labels: dict[str, Counter] = defaultdict(Counter)
        for mention, label, n in mentions:
            labels[mention][label] += n
        return cls(dict(labels), Counter(example_labels))

    def frequency(self, mention: str) -> int:
        c = self.labels.get(mention)
        return sum(c.values()) if c else 0

    def consistency(self, mention: str, label: str) -> float | None:
        c = self.labels.get(mention)
        return c[label] / sum(c.values()) if c else None


def _cut(value: float, edges: Sequence[tuple[float, str]]) -> tuple[int, str]:
    """Bucket of a value given ascending (upper bound inclusive, name) pairs."""
    for i, (upper, name) in enumerate(edges):
        if value <= upper:
            return i, name
    return len(edges), f">{edges[-1][0]:g}"


LENGTH_EDGES = [(1, "1"), (2, "2"), (4, "3-4"), (7, "5-7"), (12, "8-12")]
SENT_EDGES = [(20, "≤20"), (40, "21-40"), (80, "41-80"), (160, "81-160")]
DENSITY_EDGES = [(0.05, "≤0.05"), (0.1, "0.05-0.1"), (0.2, "0.1-0.2"), (0.3, "0.2-0.3")]
FREQ_EDGES = [(0, "0 (OOV)"), (2, "1-2"), (9, "3-9"), (49, "10-49")]
CONS_EDGES = [(0.0, "0 (never this label)"), (0.5, "≤0.5"), (0.99, "0.5-0.99"), (1.0, "1 (always)")]

TRIPLE_EDGES = [(1, "1"), (2, "2"), (4, "3-4"), (7, "5-7")]
TEXT_EDGES = [(40, "≤40"), (80, "41-80"), (160, "81-160"), (320, "161-320")]

SEEN_FEATURE = "in the model's training records"
SEEN_BUCKETS = ((0, "no (unseen)"), (1, "yes (seen)"))

SpanFeature = Callable[[Span, Example, "TrainIndex | None"], "tuple[int, str] | None"]
ExampleFeature = Callable[[Example], "tuple[int, str]"]


def _nest_role(span: Span, ex: Example) -> tuple[int, str]:
    outer = any(o.contains(span) for o in ex.spans if o is not span)
    inner = any(span.contains(o) for o in ex.spans if o is not span)
    role = "inner and outer" if outer and inner else "inner" if outer else "outer" if inner else "flat"
    return {"flat": 0, "outer": 1, "inner": 2, "inner and outer": 3}[role], role


def _label_consistency(span: Span, ex: Example, train: TrainIndex | None) -> tuple[int, str] | None:
    share = train.consistency(span.text, span.type) if train is not None else None
    return None if share is None else _cut(share, CONS_EDGES)


SPAN_FEATURES: dict[str, SpanFeature] = {
    "entity length": lambda s, ex, tr: _cut(s.length, LENGTH_EDGES),
    "nesting role": lambda s, ex, tr: _nest_role(s, ex),
    "training frequency": lambda s, ex, tr: _cut(tr.frequency(s.text), FREQ_EDGES) if tr else None,
    "label consistency": _label_consistency,
}

EXAMPLE_FEATURES: dict[str, ExampleFeature] = {
    "sentence length": lambda ex: _cut(len(ex.text), SENT_EDGES),
    "entity density": lambda ex: _cut(len(ex.spans) / max(len(ex.text), 1), DENSITY_EDGES),
    "nesting depth": lambda ex: (ex.depth, str(ex.depth)),
}


def _seen_features(seen: frozenset[int] | None) -> dict[str, ExampleFeature]:
    """The seen/unseen example feature, where the model declares its training records."""
    if seen is None:
        return {}
    return {SEEN_FEATURE: lambda ex: SEEN_BUCKETS[1] if ex.index in seen else SEEN_BUCKETS[0]}


def _key(s: Span) -> tuple[int, int, str]:
    return (s.start, s.end, s.type)


BucketKey = tuple[str, int, str]


class _Counts:
    """Per-example tp / fp / fn of each (feature, order, bucket name)."""

    TP, FP, FN = 0, 1, 2

    def __init__(self, n: int) -> None:
        self.n = n
        self.arrays: dict[BucketKey, np.ndarray] = {}

    def add(self, feature: str, bucket: tuple[int, str] | None, i: int, col: int) -> None:
        if bucket is None:
            return
        key = (feature, bucket[0], bucket[1])
        arr = self.arrays.get(key)
        if arr is None:
            arr = self.arrays[key] = np.zeros((self.n, 3), dtype=np.int64)
        arr[i, col] += 1

    def scores(self, n_boot: int, seed: int) -> list[BucketScore]:
        """Micro F1 and its bootstrap interval per bucket holding gold items (see the module doc)."""
        out = []
        for (feature, order, name), arr in sorted(self.arrays.items()):
            n_tp, n_fp, n_fn = (int(x) for x in arr.sum(axis=0))
            if n_tp + n_fn == 0:
                continue
            rows = np.flatnonzero(arr.sum(axis=1))
            stats = ExampleStats.from_counts(arr[rows, 0], arr[rows, 1], arr[rows, 2])
            f1 = 2 * n_tp / (2 * n_tp + n_fp + n_fn) if n_tp else 0.0
            low, high = bootstrap_interval(stats, "f1", n=n_boot, seed=seed)
            out.append(BucketScore(feature, name, order, n_tp, n_fp, n_fn, len(rows), f1, low, high))
        return out


def span_buckets(gold: list[Example], pred: list[Example], train: list[Example] | TrainIndex | None = None,
                 n_boot: int = 300, seed: int = 0, seen: frozenset[int] | None = None) -> list[BucketScore]:
    """Bucket scores of span extraction (exact (start, end, type) matches); ``seen``: the
    indices of the examples in the model's training records (None: unknown)."""
    index = train if isinstance(train, TrainIndex) else TrainIndex.build(train) if train else None
    counts = _Counts(len(gold))
    example_features = {**EXAMPLE_FEATURES, **_seen_features(seen)}
    for i, (g, p) in enumerate(zip(gold, pred)):
        gold_keys = {_key(s) for s in g.spans}
        pred_keys = {_key(s) for s in p.spans}
        ex_buckets = {name: fn(g) for name, fn in example_features.items()}
        seen_gold: set = set()
        for s in g.spans:
            if _key(s) in seen_gold:
                continue
            seen_gold.add(_key(s))
            col = _Counts.TP if _key(s) in pred_keys else _Counts.FN
            for name, fn in SPAN_FEATURES.items():
                counts.add(name, fn(s, g, index), i, col)
            for name, b in ex_buckets.items():
                counts.add(name, b, i, col)
        seen_pred: set = set()
        for s in p.spans:
            if _key(s) in gold_keys or _key(s) in seen_pred:
                continue
            seen_pred.add(_key(s))
            for name, fn in SPAN_FEATURES.items():
                counts.add(name, fn(s, p, index), i, _Counts.FP)
            for name, b in ex_buckets.items():
                counts.add(name, b, i, _Counts.FP)
    return counts.scores(n_boot, seed)


TripleKey = tuple[str, str, str]


def _plain(t: Triple) -> TripleKey:
    return (t.subject, t.predicate, t.object)


# How a scorer compares triples (the others: the exact strings), as the taxonomy does.
TRIPLE_KEYS: dict[str, Callable[[Triple], TripleKey]] = {"cmeie_triples": cmeie_normalise}


def _nested(t: Triple, arguments: set[str]) -> tuple[int, str]:
    """Whether an argument of ``t`` contains, or lies inside, another argument of the example."""
    mine = {t.subject, t.object}
    nested = any(a != b and a and b and (a in b or b in a) for a in mine for b in arguments)
    return (1, "nested") if nested else (0, "flat")


def relation_buckets(gold: list[Example], pred: list[Example], train: list[Example] | None = None,
                     n_boot: int = 300, seed: int = 0, seen: frozenset[int] | None = None,
                     key: Callable[[Triple], TripleKey] = _plain) -> list[BucketScore]:
    """Bucket scores of relation extraction: triples matched on ``key`` (the scorer's
    normalisation), per triples in the example, text length, argument nesting, presence of the
    triple in ``train`` and, with ``seen``, the model's training records."""
    in_train = {key(t) for ex in train for t in ex.triples} if train else None
    counts = _Counts(len(gold))
    example_features: dict[str, ExampleFeature] = {
        "triples per example": lambda ex: _cut(len({key(t) for t in ex.triples}), TRIPLE_EDGES),
        "text length": lambda ex: _cut(len(ex.text), TEXT_EDGES),
        **_seen_features(seen)}

    def triple_buckets(t: Triple, arguments: set[str]) -> dict[str, tuple[int, str] | None]:
        out: dict[str, tuple[int, str] | None] = {"argument nesting": _nested(t, arguments)}
        if in_train is not None:
            out["triple in the train split"] = (1, "in train") if key(t) in in_train else (0, "not in train")
        return out

    for i, (g, p) in enumerate(zip(gold, pred)):
        ex_buckets = {name: fn(g) for name, fn in example_features.items()}
        gold_triples = {key(t): t for t in reversed(g.triples)}       # the first of duplicates
        pred_triples = {key(t): t for t in reversed(p.triples)}
        for side, triples, other in ((0, gold_triples, pred_triples), (1, pred_triples, gold_triples)):
            arguments = {a for t in triples.values() for a in (t.subject, t.object)}
            for k, t in triples.items():
                if side == 1 and k in other:
                    continue                                       # counted once, as a gold tp
                col = (_Counts.TP if k in other else _Counts.FN) if side == 0 else _Counts.FP
                for name, b in {**triple_buckets(t, arguments), **ex_buckets}.items():
                    counts.add(name, b, i, col)
    return counts.scores(n_boot, seed)


def label_buckets(gold: list[Example], pred: list[Example], train: list[Example] | TrainIndex | None = None,
                  n_boot: int = 300, seed: int = 0, seen: frozenset[int] | None = None) -> list[BucketScore]:
    """Accuracy per bucket for classification and pair tasks (text length; label frequency in
    the training set; with ``seen``, the model's training records). ``f1`` holds the accuracy:
    one item per example, tp = correct."""
    freq = (train.example_labels or None if isinstance(train, TrainIndex)
            else Counter(ex.label for ex in train) if train else None)
    features: dict[str, Callable[[Example], tuple[int, str] | None]] = {
        "text length": lambda ex: _cut(len(ex.text) + len(ex.text2), SENT_EDGES),
        "gold label training frequency": (lambda ex: _cut(freq.get(ex.label, 0), FREQ_EDGES)) if freq else (lambda ex: None),
        **_seen_features(seen),
    }
    out = []
    for feature, fn in features.items():
        groups: dict[tuple[int, str], list[int]] = defaultdict(list)
        for i, g in enumerate(gold):
            b = fn(g)
            if b is not None:
                groups[b].append(i)
        for (order, name), idxs in sorted(groups.items()):
            correct = np.array([int(gold[i].label == pred[i].label) for i in idxs])
            stats = ExampleStats.from_counts(correct, 1 - correct, 1 - correct)
            acc = float(correct.mean())
            low, high = bootstrap_interval(stats, "f1", n=n_boot, seed=seed)
            out.append(BucketScore(feature, name, order, int(correct.sum()), int(len(idxs) - correct.sum()),
                                   int(len(idxs) - correct.sum()), len(idxs), acc, low, high))
    return out


def bucket_kind(task: TaskSpec, gold: list[Example]) -> str | None:
    """Which buckets fit the task's gold: "span" when the gold has spans, "relation" when it has
    triples, "label" for classification and pair tasks scored by accuracy or macro-F1, else None
    (no buckets)."""
    if any(g.spans for g in gold):
        return "span"
    if any(g.triples for g in gold):
        return "relation"
    if task.scorer in LABEL_SCORERS and any(g.label for g in gold):
        return "label"
    return None


def run_buckets(task: TaskSpec, gold: list[Example], pred: list[Example],
                train: list[Example] | TrainIndex | None = None, seen: frozenset[int] | None = None) -> list[BucketScore]:
    """The buckets that fit the task's gold (see :func:`bucket_kind`); ``seen`` adds the
    seen/unseen feature. Relation buckets need the train split's records; the others take its
    :class:`TrainIndex` too (built from counts, without decoding the records)."""
    kind = bucket_kind(task, gold)
    if kind == "span":
        return span_buckets(gold, pred, train, seen=seen)
    if kind == "relation":
        if isinstance(train, TrainIndex):
            raise TypeError("relation buckets need the train split's records, not its TrainIndex")
        return relation_buckets(gold, pred, train, seen=seen, key=TRIPLE_KEYS.get(task.scorer, _plain))
    if kind == "label":
        return label_buckets(gold, pred, train, seen=seen)
    return []


LABEL_SCORERS = ("macro_f1", "accuracy")
