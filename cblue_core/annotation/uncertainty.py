"""The examples a run's model is least sure of, from its stored probabilities: an annotator
with an hour corrects these first, because they teach the model the most.

- classification and text pairs (``meta["probabilities"]``): the *margin* between the two most
  probable classes (uncertainty 1 - margin) or the *entropy* of the distribution (divided by
  its maximum, log of the number of classes);
- entity spans (``meta["span_probabilities"]``): the least confident predicted span
  (uncertainty 1 - its probability); an example without a predicted span has none to doubt
  and comes last.

As for label issues, the examples the model was trained on are left out and counted: it is
sure of what it learned by heart.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ..records import Example
from ..tasks import Kind, TaskSpec
from .label_issues import ONE_CLASS_KINDS, NoClassProbabilities, ProbabilitiesMissing
from .span_issues import describe, span_probabilities

MEASURES = ("margin", "entropy")


def has_measures(task: TaskSpec) -> bool:
    """Whether ``measure`` changes the order on this task (class probabilities; spans use the
    least confident span)."""
    return task.kind in ONE_CLASS_KINDS


@dataclass(frozen=True)
class UncertainExample:
    idx: int
    key: str
    score: float     # 0-1, higher is less sure
    reason: str      # e.g. "margin 0.03 between 病情诊断 and 病因分析"


@dataclass(frozen=True)
class Uncertainty:
    items: list[UncertainExample] = field(default_factory=list)   # least sure first
    excluded_training: int = 0
    examined: int = 0
    measure: str = "margin"


def rank_uncertain(task: TaskSpec, gold: Sequence[Example], predictions: Sequence[Example],
                   excluded: Collection[int] = (), *, measure: str = "margin") -> Uncertainty:
    """Every example of ``gold`` not in ``excluded`` (indices the model was trained on), least
    sure first (ties in index order), from the matching predictions' probabilities. ``measure``
    applies to classes; span tasks use the least confident span.

    Raises NoClassProbabilities for a task with neither one class per record nor spans,
    ProbabilitiesMissing when a prediction lacks its probabilities, ValueError for an unknown
    ``measure``."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)} (got {measure!r})")
    if task.kind not in ONE_CLASS_KINDS and task.kind is not Kind.SPANS:
        raise NoClassProbabilities(f"{task.name} is {task.kind.value}: uncertainty needs class probabilities "
                                   "(classification, text pairs) or span probabilities (span extraction)")
    skip = set(excluded)
    by_index = {p.index: p for p in predictions}
    items = []
    for ex in gold:
        if ex.index in skip:
            continue
        pred = by_index.get(ex.index)
        if task.kind is Kind.SPANS:
            score, reason = _least_confident_span(task, pred, ex)
        else:
            score, reason = _class_uncertainty(task, pred, ex, measure)
        items.append(UncertainExample(ex.index, ex.key, round(score, 6), reason))
    items.sort(key=lambda it: (-it.score, it.idx))
    return Uncertainty(items, sum(1 for ex in gold if ex.index in skip), len(items), measure)


def _class_uncertainty(task: TaskSpec, pred: Example | None, ex: Example, measure: str) -> tuple[float, str]:
    dist = pred.meta.get("probabilities") if pred is not None else None
    if not isinstance(dist, dict) or not dist:
        raise ProbabilitiesMissing(f"{task.name} record {ex.key!r} (index {ex.index}): the run has no "
                                   'class probabilities for it (meta["probabilities"]); only a model '
                                   "run of a classifier carries them")
    total = sum(float(p) for p in dist.values()) or 1.0   # stored rounded: renormalise
    ranked = sorted(((float(p) / total, c) for c, p in dist.items()), key=lambda t: (-t[0], t[1]))
    (p1, c1), (p2, c2) = ranked[0], ranked[1] if len(ranked) > 1 else (0.0, "-")
    if measure == "margin":
        return 1.0 - (p1 - p2), f"margin {p1 - p2:.2f} between {c1} and {c2}"
    h = -sum(p * math.log(p) for p, _ in ranked if p > 0)
    h_max = math.log(len(ranked)) if len(ranked) > 1 else 1.0
    return h / h_max, f"entropy {h / h_max:.2f} of its maximum ({c1} {p1:.2f}, {c2} {p2:.2f})"


def _least_confident_span(task: TaskSpec, pred: Example | None, ex: Example) -> tuple[float, str]:
    spans = span_probabilities(task, pred, ex)
    if not spans:
        return 0.0, "no predicted span"
    span, p = min(spans, key=lambda sp: (sp[1], sp[0].start, sp[0].end))
    return 1.0 - p, f"least confident span {describe(span)} at {p:.2f} (of {len(spans)})"
