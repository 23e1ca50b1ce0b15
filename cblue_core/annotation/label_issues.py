"""Gold labels that are probably wrong, found by confident learning (cleanlab) from a run's
class probabilities.

Confident learning is only honest on out-of-sample probabilities: a model reproduces the labels
it was trained on, wrong ones included. The examples a run's model was trained on are therefore
left out and counted (``LabelIssues.excluded_training``).
"""
from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..records import Example
from ..tasks import Kind, TaskSpec

# Kinds whose records carry exactly one gold class, so that a distribution over classes per
# record (``meta["probabilities"]``) is what a model gives.
ONE_CLASS_KINDS = frozenset({Kind.CLASSIFICATION, Kind.PAIR})
RANKINGS = ("self_confidence", "normalized_margin")


class NoClassProbabilities(ValueError):
    """The task has no single class per record (spans, relations...): nothing to rank."""


class ProbabilitiesMissing(ValueError):
    """A prediction of the run carries no ``meta["probabilities"]`` (an imported file, a model
    that gives labels only)."""


@dataclass(frozen=True)
class LabelIssue:
    idx: int          # the gold example's index in its split
    key: str
    score: float      # cleanlab's label quality of the gold label: lower is more likely wrong
    reason: str       # in plain words, e.g. "model gives 0.97 to 治疗方案, gold says 其他 (0.01)"
    given: str        # the gold label
    suggested: str    # the label the model finds most probable among the others
    extent: tuple[int, int] | None = None   # span tasks: the [start, end) the issue is about

    def to_json(self) -> dict[str, Any]:
        return {"idx": self.idx, "key": self.key, "score": self.score, "reason": self.reason,
                "given": self.given, "suggested": self.suggested}


@dataclass(frozen=True)
class LabelIssues:
    issues: list[LabelIssue] = field(default_factory=list)   # most likely wrong first
    excluded_training: int = 0    # gold examples left out because the model was trained on them
    examined: int = 0             # gold examples the ranking looked at

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        shown = self.issues if top is None else self.issues[:top]
        return {"issues": [i.to_json() for i in shown], "excluded_training": self.excluded_training}


def class_order(task: TaskSpec, gold: Sequence[Example], probabilities: Sequence[dict[str, float]]) -> list[str]:
    """The task's declared classes, then any other label a file or a model uses (sorted, so the
    order does not depend on the records' order)."""
    declared = [lab.code for lab in task.labels]
    known = set(declared)
    extra = {ex.label for ex in gold if ex.label and ex.label not in known}
    for dist in probabilities:
        extra.update(k for k in dist if k not in known)
    return declared + sorted(extra)


def find_label_issues(task: TaskSpec, gold: Sequence[Example], predictions: Sequence[Example],
                      excluded: Collection[int] = (), *, rank_by: str = "self_confidence") -> LabelIssues:
    """The gold labels of ``gold`` that a run's class probabilities (``predictions``, matched on
    ``Example.index``) say are probably wrong, ranked most likely first by ``rank_by``
    (cleanlab's ``self_confidence`` or ``normalized_margin``). ``excluded`` are the indices of
    gold examples the model was trained on; gold examples without a label are not examined.

    Raises NoClassProbabilities for a task without one class per record, ProbabilitiesMissing
    when a gold example's prediction lacks probabilities, ValueError for an unknown ``rank_by``."""
    if task.kind not in ONE_CLASS_KINDS:
        raise NoClassProbabilities(f"{task.name} is {task.kind.value}: label issues need one class per "
                                   "record (classification or text-pair tasks)")
    kept, by_index, excluded_training = judged(gold, predictions, excluded, rank_by)
    examined: list[Example] = []
    dists: list[dict[str, float]] = []
    for ex in kept:
        if not ex.label:
            continue
        pred = by_index.get(ex.index)
        dist = pred.meta.get("probabilities") if pred is not None else None
        if not isinstance(dist, dict) or not dist:
            raise ProbabilitiesMissing(f"{task.name} record {ex.key!r} (index {ex.index}): the run has no "
                                       'class probabilities for it (meta["probabilities"]); only a model '
                                       "run of a classifier carries them")
        examined.append(ex)
        dists.append(dist)
    if len(examined) < 2:   # cleanlab estimates noise rates from the split: one record is no split
        return LabelIssues([], excluded_training, len(examined))
    found = confident_learning([str(ex.label) for ex in examined], dists,
                               class_order(task, examined, dists), rank_by)
    issues = [_issue(examined[i], found.classes, found.probs[i], q) for i, q in found.ranked]
    return LabelIssues(issues, excluded_training, len(examined))


def judged(gold: Sequence[Example], predictions: Sequence[Example], excluded: Collection[int],
           rank_by: str) -> tuple[list[Example], dict[int, Example], int]:
    """The gold examples to judge (not ``excluded``), the predictions by index, and how many
    were left out; ValueError for an unknown ``rank_by``."""
    if rank_by not in RANKINGS:
        raise ValueError(f"rank_by must be one of {', '.join(RANKINGS)} (got {rank_by!r})")
    skip = set(excluded)
    kept = [ex for ex in gold if ex.index not in skip]
    return kept, {p.index: p for p in predictions}, len(gold) - len(kept)


@dataclass(frozen=True)
class Confident:
    """cleanlab's verdict on a set of items: ``ranked`` are (item, label quality) of the items
    whose given label is probably wrong, most likely first; ``probs`` the items' distributions
    over ``classes``, normalised."""
    ranked: list[tuple[int, float]]
    classes: list[str]
    probs: Any


def confident_learning(given: Sequence[str], dists: Sequence[dict[str, float]], order: Sequence[str],
                       rank_by: str) -> Confident:
    """Confident learning over items with a given label and a model's distribution each (two
    items at least); ``order`` lists the classes (every given label among them)."""
    import numpy as np
    from cleanlab.filter import find_label_issues as cleanlab_issues
    from cleanlab.rank import get_label_quality_scores

    # Only classes some item is given or most probably is: a declared class no one uses
    # makes cleanlab warn about a class without examples; its little mass is spread over the rest.
    used = set(given) | {max(d, key=lambda c: d[c]) for d in dists}
    classes = [c for c in order if c in used]
    column = {c: i for i, c in enumerate(classes)}
    probs = np.array([[float(d.get(c, 0.0)) for c in classes] for d in dists])
    # Stored probabilities are rounded (6 places), and cleanlab wants rows summing to 1.
    totals = probs.sum(axis=1, keepdims=True)
    probs = np.divide(probs, totals, out=np.full_like(probs, 1.0 / len(classes)), where=totals > 0)
    labels = np.array([column[g] for g in given])
    with warnings.catch_warnings():
        # A class given to one item or none is ordinary here (a rare entity type); cleanlab
        # keeps such an item rather than flag it, and says so for every such class.
        warnings.filterwarnings("ignore", message="May not flag all label issues", category=UserWarning)
        ranked = cleanlab_issues(labels, probs, return_indices_ranked_by=rank_by, n_jobs=1)
    quality = get_label_quality_scores(labels, probs, method=rank_by)
    # Equal quality is common (a given class the model gives no mass at all scores 0): the item
    # whose other class the model is surest of goes first.
    rival = np.where(np.arange(len(classes)) == labels[:, None], -1.0, probs).max(axis=1)
    first = sorted((int(i) for i in ranked), key=lambda i: (round(float(quality[i]), 6), -rival[i]))
    return Confident([(i, round(float(quality[i]), 6)) for i in first], classes, probs)


def _issue(ex: Example, classes: list[str], row: Any, score: float) -> LabelIssue:
    given = str(ex.label)
    g = classes.index(given)
    others = [i for i in range(len(classes)) if i != g]
    best = max(others, key=lambda i: row[i])
    reason = f"model gives {row[best]:.2f} to {classes[best]}, gold says {given} ({row[g]:.2f})"
    return LabelIssue(ex.index, ex.key, score, reason, given, classes[best])
