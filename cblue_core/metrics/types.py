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

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt


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

    def __add__(self, other: PRF) -> PRF:
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

    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(tp, fp, fn)`` of a ``counts`` aggregate."""
        return (_need(self.tp, "tp", self.kind), _need(self.fp, "fp", self.kind),
                _need(self.fn, "fn", self.kind))

    def label_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(gold_count, pred_count, correct)`` of a ``labels`` aggregate."""
        return (_need(self.gold_count, "gold_count", self.kind),
                _need(self.pred_count, "pred_count", self.kind),
                _need(self.correct, "correct", self.kind))

    def score_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, weights)`` of a ``scores`` aggregate."""
        return _need(self.sums, "sums", self.kind), _need(self.weights, "weights", self.kind)


def _need(arr: np.ndarray | None, name: str, kind: str) -> np.ndarray:
    # The array fields are optional because each kind fills only its own; asking a kind for
    # another kind's array is a programming error worth a clear message.
    if arr is None:
        raise ValueError(f"{kind!r} statistics have no {name!r}")
    return arr


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
    def from_counts(cls, tp: npt.ArrayLike, fp: npt.ArrayLike, fn: npt.ArrayLike) -> ExampleStats:
        tp_, fp_, fn_ = (np.asarray(a, dtype=np.int64) for a in (tp, fp, fn))
        return cls("counts", len(tp_), tp=tp_, fp=fp_, fn=fn_)

    @classmethod
    def from_labels(cls, gold: npt.ArrayLike, pred: npt.ArrayLike, labels: tuple[str, ...],
                    n: int | None = None, unit: npt.ArrayLike | None = None) -> ExampleStats:
        gold_ = np.asarray(gold, dtype=np.int64)
        pred_ = np.asarray(pred, dtype=np.int64)
        unit_ = None if unit is None else np.asarray(unit, dtype=np.int64)
        return cls("labels", len(gold_) if n is None else n, gold=gold_, pred=pred_, unit=unit_,
                   labels=tuple(labels))

    @classmethod
    def from_scores(cls, score: npt.ArrayLike, weight: npt.ArrayLike | None = None,
                    group: npt.ArrayLike | None = None, groups: tuple[str, ...] = (),
                    name: str = "") -> ExampleStats:
        """``name``: the metric the (group) mean is reported as, e.g. ``rouge_l``, ``overall``."""
        score_ = np.asarray(score, dtype=np.float64)
        weight_ = np.ones_like(score_) if weight is None else np.asarray(weight, dtype=np.float64)
        group_ = (np.zeros(len(score_), dtype=np.int64) if group is None
                  else np.asarray(group, dtype=np.int64))
        return cls("scores", len(score_), score=score_, weight=weight_, group=group_,
                   groups=tuple(groups) or ("all",), name=name)

    # ------------------------------------------------------------------ typed field access
    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-example ``(tp, fp, fn)`` of ``counts`` statistics."""
        return (_need(self.tp, "tp", self.kind), _need(self.fp, "fp", self.kind),
                _need(self.fn, "fn", self.kind))

    def label_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-unit ``(gold, pred)`` label ids of ``labels`` statistics."""
        return _need(self.gold, "gold", self.kind), _need(self.pred, "pred", self.kind)

    def scores(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-example ``(score, weight, group)`` of ``scores`` statistics."""
        return (_need(self.score, "score", self.kind), _need(self.weight, "weight", self.kind),
                _need(self.group, "group", self.kind))

    # ------------------------------------------------------------------ aggregation
    def all_indices(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64)[None, :]

    def aggregate(self, idx: npt.ArrayLike | None = None) -> Aggregate:
        """Sum the statistics over each row of ``idx`` ((B, n) example indices; None = all)."""
        rows = self.all_indices() if idx is None else np.asarray(idx)
        if rows.ndim == 1:
            rows = rows[None, :]
        b = rows.shape[0]
        if self.kind == "counts":
            if self.n == 0:
                z = np.zeros(b, dtype=np.int64)
                return Aggregate("counts", tp=z, fp=z, fn=z)
            tp, fp, fn = self.counts()
            return Aggregate("counts", tp=tp[rows].sum(axis=1), fp=fp[rows].sum(axis=1),
                             fn=fn[rows].sum(axis=1))
        if self.kind == "labels":
            return self._aggregate_labels(rows, b)
        if self.kind == "scores":
            g = max(len(self.groups), 1)
            if self.n == 0:
                z2 = np.zeros((b, g))
                return Aggregate("scores", sums=z2, weights=z2)
            score, weight, group = self.scores()
            off = (np.arange(b, dtype=np.int64) * g)[:, None]
            keys = (group[rows] + off).ravel()
            w = weight[rows].ravel()
            sums = np.bincount(keys, weights=w * score[rows].ravel(), minlength=b * g)
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
            gold, pred = self.label_ids()
            g = gold[idx]
            p = pred[idx]
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
        gm, pm, cm, um = self._unit_matrices
        w = np.bincount((idx + (np.arange(b, dtype=np.int64) * self.n)[:, None]).ravel(),
                        minlength=b * self.n).reshape(b, self.n).astype(np.float64)
        return Aggregate("labels", gold_count=w @ gm, pred_count=w @ pm, correct=w @ cm,
                         units=(w @ um)[:, 0])

    @cached_property
    def _unit_matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # Cached: every bootstrap block multiplies by the same per-example matrices.
        gold, pred = self.label_ids()
        unit = _need(self.unit, "unit", self.kind)
        nl = max(len(self.labels), 1)
        n = self.n
        gm = np.bincount(unit * nl + gold, minlength=n * nl).reshape(n, nl)
        has = pred >= 0
        pm = np.bincount((unit * nl + pred)[has], minlength=n * nl).reshape(n, nl)
        ok = gold == pred
        cm = np.bincount((unit * nl + gold)[ok], minlength=n * nl).reshape(n, nl)
        um = np.bincount(unit, minlength=n).reshape(n, 1)
        return (gm.astype(np.float64), pm.astype(np.float64), cm.astype(np.float64),
                um.astype(np.float64))

    def subset(self, examples: npt.ArrayLike) -> ExampleStats:
        """Statistics of a subset of examples (e.g. a slice), renumbered 0..k-1."""
        ex = np.asarray(examples, dtype=np.int64)
        if self.kind == "counts":
            tp, fp, fn = self.counts()
            return ExampleStats.from_counts(tp[ex], fp[ex], fn[ex])
        if self.kind == "scores":
            score, weight, group = self.scores()
            return ExampleStats.from_scores(score[ex], weight[ex], group[ex], self.groups, self.name)
        gold, pred = self.label_ids()
        if self.unit is None:
            return ExampleStats.from_labels(gold[ex], pred[ex], self.labels)
        remap = np.full(self.n, -1, dtype=np.int64)
        remap[ex] = np.arange(len(ex))
        keep = remap[self.unit] >= 0
        return ExampleStats.from_labels(gold[keep], pred[keep], self.labels,
                                        n=len(ex), unit=remap[self.unit[keep]])


# ---------------------------------------------------------------------- metric functions
# Each maps an Aggregate to a (B,) float array. They are what bootstrap.py resamples.

def _div(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    num = np.asarray(a, dtype=np.float64)
    den = np.asarray(b, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def micro_precision(agg: Aggregate) -> np.ndarray:
    tp, fp, _ = agg.counts()
    return _div(tp, tp + fp)


def micro_recall(agg: Aggregate) -> np.ndarray:
    tp, _, fn = agg.counts()
    return _div(tp, tp + fn)


def micro_f1(agg: Aggregate) -> np.ndarray:
    tp, fp, fn = agg.counts()
    return _div(2 * tp, 2 * tp + fp + fn)


def accuracy(agg: Aggregate) -> np.ndarray:
    _, _, correct = agg.label_counts()
    return _div(correct.sum(axis=1), _need(agg.units, "units", agg.kind))


def _macro(per_label: np.ndarray, agg: Aggregate) -> np.ndarray:
    gold_count, pred_count, _ = agg.label_counts()
    # scikit-learn's label set: the sorted union of the labels that occur in y_true or y_pred.
    present = (gold_count + pred_count) > 0
    k = present.sum(axis=1)
    return _div(np.where(present, per_label, 0.0).sum(axis=1), k)


def macro_precision(agg: Aggregate) -> np.ndarray:
    _, pred_count, correct = agg.label_counts()
    return _macro(_div(correct, pred_count), agg)


def macro_recall(agg: Aggregate) -> np.ndarray:
    gold_count, _, correct = agg.label_counts()
    return _macro(_div(correct, gold_count), agg)


def macro_f1(agg: Aggregate) -> np.ndarray:
    """scikit-learn ``f1_score(average='macro')`` with default ``zero_division``: per-label
    F = 2tp / (gold + pred) (0 when tp = 0), averaged over the labels present in gold or pred."""
    gold_count, pred_count, correct = agg.label_counts()
    return _macro(_div(2 * correct, gold_count + pred_count), agg)


def mean_score(agg: Aggregate) -> np.ndarray:
    """Weighted mean of the per-example scores over all groups."""
    sums, weights = agg.score_sums()
    return _div(sums.sum(axis=1), weights.sum(axis=1))


def group_mean(agg: Aggregate) -> np.ndarray:
    """Mean over the groups present (weight > 0) of each group's weighted mean score."""
    sums, weights = agg.score_sums()
    present = weights > 0
    means = _div(sums, weights)
    return _div(np.where(present, means, 0.0).sum(axis=1), present.sum(axis=1))


def one_group_mean(group_id: int) -> Callable[[Aggregate], np.ndarray]:
    def fn(agg: Aggregate) -> np.ndarray:
        sums, weights = agg.score_sums()
        return _div(sums[:, group_id], weights[:, group_id])
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
        if name.startswith(("scenario:", "group:")):
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
