"""scikit-learn's ``classification_report(y_true, y_pred, output_dict=True, zero_division=0)``
averages, without scikit-learn.

* Classes are the sorted union of the gold and predicted labels.
* Per class: P = tp/predicted (0 if never predicted), R = tp/support (0 if no support),
  F = 2·tp/(support + predicted) (scikit-learn >= 1.3; 1.2 computed it from P and R, which
  can differ in the last bit).
* ``macro avg`` is the unweighted mean over the classes; ``weighted avg`` weights each class
  by its support. Sums follow numpy's pairwise summation, so results are bit-identical to
  numpy's ``mean``/``average`` on the same values.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ClassCounts", "ClassLabel", "class_counts", "pairwise_sum", "report_averages"]


class ClassLabel(Protocol):
    """What scikit-learn needs of a label: hashable (a set of classes) and orderable (sorted)."""

    def __hash__(self) -> int: ...

    def __lt__(self, other: Any, /) -> bool: ...


@dataclass(frozen=True)
class ClassCounts:
    label: ClassLabel
    tp: int
    predicted: int
    support: int

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.tp / self.support if self.support else 0.0

    @property
    def f1(self) -> float:
        denom = self.support + self.predicted
        return 2.0 * self.tp / denom if denom else 0.0


def pairwise_sum(values: Sequence[float]) -> float:
    """numpy's pairwise summation of a contiguous float64 array (``np.add.reduce``)."""
    n = len(values)
    if n < 8:
        res = 0.0
        for v in values:
            res += v
        return res
    if n <= 128:
        r = [float(v) for v in values[:8]]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += values[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_sum(values[:half]) + pairwise_sum(values[half:])


def class_counts(gold: Sequence[ClassLabel], pred: Sequence[ClassLabel]) -> list[ClassCounts]:
    """Per-class counts over the sorted union of labels (scikit-learn's ``unique_labels``)."""
    if len(gold) != len(pred):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{len(gold)}, {len(pred)}]")
    if not gold:
        raise ValueError("classification_report needs at least one sample")
    try:
        labels = sorted(set(gold) | set(pred))
    except TypeError as exc:
        raise ValueError("Mix of label input types (string and number)") from exc
    tp = dict.fromkeys(labels, 0)
    predicted = dict.fromkeys(labels, 0)
    support = dict.fromkeys(labels, 0)
    for g, p in zip(gold, pred):
        support[g] += 1
        predicted[p] += 1
        if g == p:
            tp[g] += 1
    return [ClassCounts(lab, tp[lab], predicted[lab], support[lab]) for lab in labels]


def report_averages(gold: Sequence[ClassLabel],
                    pred: Sequence[ClassLabel]) -> dict[str, tuple[float, float, float]]:
    """``{"macro avg": (P, R, F), "weighted avg": (P, R, F)}`` as classification_report gives."""
    classes = class_counts(gold, pred)
    n = len(classes)
    ps = [c.precision for c in classes]
    rs = [c.recall for c in classes]
    fs = [c.f1 for c in classes]
    weights = [float(c.support) for c in classes]
    total = pairwise_sum(weights)
    macro = (pairwise_sum(ps) / n, pairwise_sum(rs) / n, pairwise_sum(fs) / n)
    wp, wr, wf = (pairwise_sum([v * w for v, w in zip(vals, weights)]) / total for vals in (ps, rs, fs))
    return {"macro avg": macro, "weighted avg": (wp, wr, wf)}
