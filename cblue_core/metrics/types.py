"""Typed metric results and per-example sufficient statistics.

Every scorer returns a :class:`TaskScore`. Besides the numbers it keeps an
:class:`ExampleStats`: numpy arrays of per-example sufficient statistics from which any headline
metric can be recomputed for a resampled index array in a few vectorised numpy operations
(:mod:`cblue_core.metrics.bootstrap` relies on this). Three kinds exist:

* ``counts``: per-example ``tp``, ``fp``, ``fn`` (micro P/R/F tasks);
* ``labels``: one ``(gold id, pred id)`` pair per labelled unit (pred id ``-1``: no prediction),
  with ``unit`` mapping each unit to its example when an example holds several units (dialogue
  turns); classification accuracy and scikit-learn-style macro P/R/F;
* ``scores``: a per-example score with a weight (0 drops the example) and an optional group
  (e.g. the CliMedBench scenario): weighted means, or the mean of per-group means.

``ExampleStats.aggregate(idx)`` turns a ``(B, n)`` matrix of resampled example indices into an
:class:`Aggregate` (summed statistics, one row per resample); the metric functions at the end
of this module (``micro_f1``, ``macro_f1``, ``accuracy``, ``mean_score``, ``group_mean``...) map
an :class:`Aggregate` to a ``(B,)`` array. On ``idx = arange(n)[None]`` the result is the point
estimate, so point estimates and intervals come from the same code.

All metric values are on the 0-1 scale (Kendall's tau, in CliMedBench, on -1..1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class PRF:
    """True positives, false positives and false negatives, with P/R/F (0 when undefined)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        d = self.tp + self.fp
        return self.tp / d if d else 0.0

    @property
    def recall(self) -> float:
        d = self.tp + self.fn
        return self.tp / d if d else 0.0

    @property
    def f1(self) -> float:
        # 2PR/(P+R) written on counts (scikit-learn >= 1.3 does the same); 0 when tp == 0.
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else 0.0

    @property
    def support(self) -> int:
        """Gold items (tp + fn)."""
        return self.tp + self.fn

    @property
    def predicted(self) -> int:
        return self.tp + self.fp

    def __add__(self, other: "PRF") -> "PRF":
        return PRF(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def to_dict(self) -> dict[str, float]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "support": self.support}


@dataclass
class Aggregate:
    """Summed sufficient statistics for ``B`` resamples (``B = 1`` for the point estimate)."""

    kind: str
    tp: np.ndarray | None = None          # (B,)
    fp: np.ndarray | None = None
    fn: np.ndarray | None = None
    gold_count: np.ndarray | None = None  # (B, L) units whose gold is label l
    pred_count: np.ndarray | None = None  # (B, L) units predicted as label l
    correct: np.ndarray | None = None     # (B, L) units with gold == pred == l
    units: np.ndarray | None = None       # (B,) labelled units (missing predictions included)
    sums: np.ndarray | None = None        # (B, G) weighted score sums per group
    weights: np.ndarray | None = None     # (B, G) weight sums per group


@dataclass(eq=False, repr=False)
class ExampleStats:
    """Per-example sufficient statistics (see the module doc). ``n`` is the number of examples,
    the resampling unit of the bootstrap."""

    kind: str                                   # "counts" | "labels" | "scores"
    n: int
    tp: np.ndarray | None = None                # counts: (n,) int64
    fp: np.ndarray | None = None
    fn: np.ndarray | None = None
    gold: np.ndarray | None = None              # labels: (m,) int64 label ids
    pred: np.ndarray | None = None              # labels: (m,) int64, -1 = no prediction
    unit: np.ndarray | None = None              # labels: (m,) example of each unit; None: m == n
    labels: tuple[str, ...] = ()                # labels: id -> label code
    score: np.ndarray | None = None             # scores: (n,) float64
    weight: np.ndarray | None = None            # scores: (n,) float64 (0 = not scored)
    group: np.ndarray | None = None             # scores: (n,) int64 group id
    groups: tuple[str, ...] = ()                # scores: group id -> name
    name: str = ""                              # scores: the metric the mean is reported as

    def __repr__(self) -> str:
        extra = f", labels={len(self.labels)}" if self.kind == "labels" else (
            f", groups={self.groups}" if self.kind == "scores" else "")
        return f"ExampleStats(kind={self.kind!r}, n={self.n}{extra})"

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_counts(cls, tp, fp, fn) -> "ExampleStats":
        tp, fp, fn = (np.asarray(a, dtype=np.int64) for a in (tp, fp, fn))
        return cls("counts", len(tp), tp=tp, fp=fp, fn=fn)

    @classmethod
    def from_labels(cls, gold: np.ndarray, pred: np.ndarray, labels: tuple[str, ...],
                    n: int | None = None, unit: np.ndarray | None = None) -> "ExampleStats":
        gold = np.asarray(gold, dtype=np.int64)
        pred = np.asarray(pred, dtype=np.int64)
        if unit is not None:
            unit = np.asarray(unit, dtype=np.int64)
        return cls("labels", len(gold) if n is None else n, gold=gold, pred=pred, unit=unit,
                   labels=tuple(labels))

    @classmethod
    def from_scores(cls, score, weight=None, group=None, groups: tuple[str, ...] = (),
                    name: str = "") -> "ExampleStats":
        """``name``: the metric the (group) mean is reported as, e.g. ``rouge_l``, ``overall``."""
        score = np.asarray(score, dtype=np.float64)
        weight = np.ones_like(score) if weight is None else np.asarray(weight, dtype=np.float64)
        group = np.zeros(len(score), dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
        return cls("scores", len(score), score=score, weight=weight, group=group,
                   groups=tuple(groups) or ("all",), name=name)

    # ------------------------------------------------------------------ aggregation
    def all_indices(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64)[None, :]

    def aggregate(self, idx: np.ndarray | None = None) -> Aggregate:
        """Sum the statistics over each row of ``idx`` ((B, n) example indices; None = all)."""
        if idx is None:
            idx = self.all_indices()
        idx = np.asarray(idx)
        if idx.ndim == 1:
            idx = idx[None, :]
        b = idx.shape[0]
        if self.kind == "counts":
            if self.n == 0:
                z = np.zeros(b, dtype=np.int64)
                return Aggregate("counts", tp=z, fp=z, fn=z)
            return Aggregate("counts", tp=self.tp[idx].sum(axis=1), fp=self.fp[idx].sum(axis=1),
                             fn=self.fn[idx].sum(axis=1))
        if self.kind == "labels":
            return self._aggregate_labels(idx, b)
        if self.kind == "scores":
            g = max(len(self.groups), 1)
            if self.n == 0:
                z = np.zeros((b, g))
                return Aggregate("scores", sums=z, weights=z)
            off = (np.arange(b, dtype=np.int64) * g)[:, None]
            keys = (self.group[idx] + off).ravel()
            w = self.weight[idx].ravel()
            sums = np.bincount(keys, weights=w * self.score[idx].ravel(), minlength=b * g)
            wsum = np.bincount(keys, weights=w, minlength=b * g)
            return Aggregate("scores", sums=sums.reshape(b, g), weights=wsum.reshape(b, g))
        raise ValueError(f"unknown stats kind {self.kind!r}")

    def _aggregate_labels(self, idx: np.ndarray, b: int) -> Aggregate:
        nl = max(len(self.labels), 1)
        if self.unit is None:
            # One unit per example: gather the labels of the resampled examples and count
            # (resample, label) pairs with one bincount each.
            if self.n == 0:
                z = np.zeros((b, nl), dtype=np.int64)
                return Aggregate("labels", gold_count=z, pred_count=z, correct=z,
                                 units=np.zeros(b, dtype=np.int64))
            g = self.gold[idx]
            p = self.pred[idx]
            off = (np.arange(b, dtype=np.int64) * nl)[:, None]
            gold_count = np.bincount((g + off).ravel(), minlength=b * nl).reshape(b, nl)
            has = p >= 0
            pred_count = np.bincount((p + off)[has], minlength=b * nl).reshape(b, nl)
            ok = g == p
            correct = np.bincount((g + off)[ok], minlength=b * nl).reshape(b, nl)
            units = np.full(b, idx.shape[1], dtype=np.int64)
            return Aggregate("labels", gold_count=gold_count, pred_count=pred_count,
                             correct=correct, units=units)
        # Several units per example (dialogue turns): per-example count matrices, then the
        # resample weights (how often each example was drawn) times those matrices.
        mats = self._unit_matrices()
        w = np.bincount((idx + (np.arange(b, dtype=np.int64) * self.n)[:, None]).ravel(),
                        minlength=b * self.n).reshape(b, self.n).astype(np.float64)
        gc, pc, cc, uc = (w @ m for m in mats)
        return Aggregate("labels", gold_count=gc, pred_count=pc, correct=cc, units=uc[:, 0])

    def _unit_matrices(self) -> tuple[np.ndarray, ...]:
        cache = getattr(self, "_mats", None)
        if cache is not None:
            return cache
        nl = max(len(self.labels), 1)
        n = self.n
        gm = np.bincount(self.unit * nl + self.gold, minlength=n * nl).reshape(n, nl)
        has = self.pred >= 0
        pm = np.bincount((self.unit * nl + self.pred)[has], minlength=n * nl).reshape(n, nl)
        ok = self.gold == self.pred
        cm = np.bincount((self.unit * nl + self.gold)[ok], minlength=n * nl).reshape(n, nl)
        um = np.bincount(self.unit, minlength=n).reshape(n, 1)
        mats = tuple(m.astype(np.float64) for m in (gm, pm, cm, um))
        object.__setattr__(self, "_mats", mats)
        return mats

    def subset(self, examples: np.ndarray | list[int]) -> "ExampleStats":
        """Statistics of a subset of examples (e.g. a slice), renumbered 0..k-1."""
        ex = np.asarray(examples, dtype=np.int64)
        if self.kind == "counts":
            return ExampleStats.from_counts(self.tp[ex], self.fp[ex], self.fn[ex])
        if self.kind == "scores":
            return ExampleStats.from_scores(self.score[ex], self.weight[ex], self.group[ex], self.groups,
                                            self.name)
        if self.unit is None:
            return ExampleStats.from_labels(self.gold[ex], self.pred[ex], self.labels)
        remap = np.full(self.n, -1, dtype=np.int64)
        remap[ex] = np.arange(len(ex))
        keep = remap[self.unit] >= 0
        return ExampleStats.from_labels(self.gold[keep], self.pred[keep], self.labels,
                                        n=len(ex), unit=remap[self.unit[keep]])


# ---------------------------------------------------------------------- metric functions
# Each maps an Aggregate to a (B,) float array. They are what bootstrap.py resamples.

def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


def micro_precision(agg: Aggregate) -> np.ndarray:
    return _div(agg.tp, agg.tp + agg.fp)


def micro_recall(agg: Aggregate) -> np.ndarray:
    return _div(agg.tp, agg.tp + agg.fn)


def micro_f1(agg: Aggregate) -> np.ndarray:
    return _div(2 * agg.tp, 2 * agg.tp + agg.fp + agg.fn)


def accuracy(agg: Aggregate) -> np.ndarray:
    return _div(agg.correct.sum(axis=1), agg.units)


def _present(agg: Aggregate) -> np.ndarray:
    # scikit-learn's label set: the sorted union of the labels that occur in y_true or y_pred.
    return (agg.gold_count + agg.pred_count) > 0


def _macro(per_label: np.ndarray, agg: Aggregate) -> np.ndarray:
    present = _present(agg)
    k = present.sum(axis=1)
    return _div(np.where(present, per_label, 0.0).sum(axis=1), k)


def macro_precision(agg: Aggregate) -> np.ndarray:
    return _macro(_div(agg.correct, agg.pred_count), agg)


def macro_recall(agg: Aggregate) -> np.ndarray:
    return _macro(_div(agg.correct, agg.gold_count), agg)


def macro_f1(agg: Aggregate) -> np.ndarray:
    """scikit-learn ``f1_score(average='macro')`` with default ``zero_division``: per-label
    F = 2tp / (gold + pred) (0 when tp = 0), averaged over the labels present in gold or pred."""
    return _macro(_div(2 * agg.correct, agg.gold_count + agg.pred_count), agg)


def mean_score(agg: Aggregate) -> np.ndarray:
    """Weighted mean of the per-example scores over all groups."""
    return _div(agg.sums.sum(axis=1), agg.weights.sum(axis=1))


def group_mean(agg: Aggregate) -> np.ndarray:
    """Mean over the groups present (weight > 0) of each group's weighted mean score."""
    present = agg.weights > 0
    means = _div(agg.sums, agg.weights)
    return _div(np.where(present, means, 0.0).sum(axis=1), present.sum(axis=1))


def one_group_mean(group_id: int) -> Callable[[Aggregate], np.ndarray]:
    def fn(agg: Aggregate) -> np.ndarray:
        return _div(agg.sums[:, group_id], agg.weights[:, group_id])
    fn.__name__ = f"group_{group_id}_mean"
    return fn


MetricFn = Callable[[Aggregate], np.ndarray]

COUNT_METRICS: dict[str, MetricFn] = {"precision": micro_precision, "recall": micro_recall,
                                      "f1": micro_f1}
LABEL_METRICS: dict[str, MetricFn] = {"accuracy": accuracy, "macro_f1": macro_f1,
                                      "macro_precision": macro_precision,
                                      "macro_recall": macro_recall}


def metric_fn_for(stats: ExampleStats, name: str) -> MetricFn | None:
    """The vectorised function behind a metric name of a TaskScore built on ``stats``
    (None when the metric cannot be recomputed from the statistics)."""
    if stats.kind == "counts":
        return COUNT_METRICS.get(name)
    if stats.kind == "labels":
        return LABEL_METRICS.get(name)
    if stats.kind == "scores":
        if name.startswith("scenario:") or name.startswith("group:"):
            g = name.split(":", 1)[1]
            return one_group_mean(stats.groups.index(g)) if g in stats.groups else None
        if name in (stats.name, "mean"):
            return group_mean if len(stats.groups) > 1 else mean_score
        return None
    return None


def evaluate(stats: ExampleStats, fn: MetricFn) -> float:
    """Point estimate of ``fn`` on all examples."""
    return float(fn(stats.aggregate())[0])


@dataclass
class TaskScore:
    """One task's score: the headline metric name, all metrics (0-1), per-label counts, the
    per-example statistics, notes on the choices made, and bootstrap intervals."""

    task: str
    headline: str
    metrics: dict[str, float]
    per_label: dict[str, PRF] = field(default_factory=dict)
    stats: ExampleStats | None = None
    notes: list[str] = field(default_factory=list)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float:
        """The headline metric."""
        return self.metrics[self.headline]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (statistics arrays left out)."""
        return {"task": self.task, "headline": self.headline, "value": self.value,
                "metrics": dict(self.metrics),
                "per_label": {k: v.to_dict() for k, v in self.per_label.items()},
                "notes": list(self.notes),
                "intervals": {k: [lo, hi] for k, (lo, hi) in self.intervals.items()},
                "extra": self.extra}
