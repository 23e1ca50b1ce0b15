"""CMeIE gold that is probably wrong about its *mentions*, found by confident learning from a
run's candidate mentions (the built-in relation models keep, per record, their candidate
subjects and objects with the span head's probability: ``meta["subjects"]`` and
``meta["objects"]``, lists of ``[mention, probability]``).

Each candidate is an item: its role (subject or object), the given label "the gold has a
triple with this mention in this role" or not, and the model's probability that it is one.
Confident learning over these items finds mentions the model is sure of that no gold triple
uses (a triple probably missing) and gold mentions the model barely believes. A gold mention
that is not among the candidates has no stored probability and is not judged.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from ..records import Example
from ..tasks import Kind, TaskSpec
from .label_issues import (
    LabelIssue,
    LabelIssues,
    NoClassProbabilities,
    ProbabilitiesMissing,
    confident_learning,
    judged,
)

ROLES = ("subject", "object")


def _candidates(task: TaskSpec, pred: Example | None, ex: Example) -> list[tuple[str, str, float]]:
    """(role, mention, probability) of the run's candidates for ``ex``."""
    meta = pred.meta if pred is not None else {}
    lists = [found for role in ROLES if isinstance(found := meta.get(f"{role}s"), list)]
    if len(lists) != len(ROLES):
        raise ProbabilitiesMissing(f"{task.name} record {ex.key!r} (index {ex.index}): the run has no candidate "
                                   'mentions for it (meta["subjects"] and meta["objects"]); only a model run of '
                                   "a built-in relation model carries them")
    return [(role, str(m), float(p)) for role, found in zip(ROLES, lists) for m, p in found]


def find_mention_issues(task: TaskSpec, gold: Sequence[Example], predictions: Sequence[Example],
                        excluded: Collection[int] = (), *, rank_by: str = "self_confidence") -> LabelIssues:
    """Per-mention label issues of a relation task's ``gold`` (see the module's docstring), most
    likely wrong first; ``excluded`` are the indices the model was trained on.

    Raises NoClassProbabilities for a task that is not relation extraction,
    ProbabilitiesMissing when a prediction lacks candidate mentions, ValueError for an unknown
    ``rank_by``."""
    if task.kind is not Kind.RELATIONS:
        raise NoClassProbabilities(f"{task.name} is {task.kind.value}: mention issues need relation triples")
    kept, by_index, excluded_training = judged(gold, predictions, excluded, rank_by)
    units: list[tuple[Example, str, str, float, bool]] = []   # (example, role, mention, p, in gold)
    for ex in kept:
        used = {"subject": {t.subject for t in ex.triples}, "object": {t.object for t in ex.triples}}
        units += [(ex, role, m, p, m in used[role]) for role, m, p in _candidates(task, by_index.get(ex.index), ex)]
    if len(units) < 2:
        return LabelIssues([], excluded_training, len(kept))
    given = [role if in_gold else f"not {role}" for _, role, _, _, in_gold in units]
    dists = [{role: p, f"not {role}": 1.0 - p} for _, role, _, p, _ in units]
    found = confident_learning(given, dists, [c for role in ROLES for c in (role, f"not {role}")], rank_by)
    return LabelIssues([_issue(*units[i], quality) for i, quality in found.ranked], excluded_training, len(kept))


def _issue(ex: Example, role: str, mention: str, p: float, in_gold: bool, quality: float) -> LabelIssue:
    if in_gold:
        return LabelIssue(ex.index, ex.key, quality, f"model gives the gold {role} {mention!r} only {p:.2f}",
                          f"{role} {mention!r}", f"not {role}")
    return LabelIssue(ex.index, ex.key, quality,
                      f"model finds {mention!r} as {role} at {p:.2f}; no gold triple has it as {role}",
                      f"not {role}", f"{role} {mention!r}")
