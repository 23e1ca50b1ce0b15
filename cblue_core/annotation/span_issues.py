"""Gold entity spans that are probably wrong, found by confident learning per span from a run's
span probabilities (``meta["span_probabilities"]``, one per predicted span).

A run stores the probability of the spans its model predicted, not of every possible span, so
the items judged are the *extents the model predicted*: at each, the gold type (or "no span")
is the given label and the model's distribution is its type at its probability, the rest of the
mass on "no span". cleanlab's confident learning over these items then finds

- spans missing from gold that the model predicts confidently (suggested: add them),
- gold spans the model confidently types otherwise (suggested: the model's type),
- gold spans the model predicts with low probability (suggested: remove or check).

A gold span at an extent the model did not predict has no stored probability: it is not
judged (``LabelIssues.examined`` counts examples). As for labels, the examples the model was
trained on are left out and counted.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from ..records import Example, Span
from ..tasks import Kind, TaskSpec
from .label_issues import (
    LabelIssue,
    LabelIssues,
    NoClassProbabilities,
    ProbabilitiesMissing,
    confident_learning,
    judged,
)

NO_SPAN = "(no span)"


def describe(span: Span) -> str:
    """``type 'text' [start, end)``: a span as the issue lists show it."""
    return f"{span.type} {span.text!r} [{span.start}, {span.end})"


def span_probabilities(task: TaskSpec, pred: Example | None, ex: Example) -> list[tuple[Span, float]]:
    """The predicted spans of ``ex`` with their probabilities; ProbabilitiesMissing when the
    run stores none for it."""
    probs = pred.meta.get("span_probabilities") if pred is not None else None
    if pred is None or not isinstance(probs, list) or len(probs) != len(pred.spans):
        raise ProbabilitiesMissing(f"{task.name} record {ex.key!r} (index {ex.index}): the run has no span "
                                   'probabilities for it (meta["span_probabilities"], one per predicted span); '
                                   "only a model run of a span model carries them")
    return [(s, float(p)) for s, p in zip(pred.spans, probs)]


def find_span_issues(task: TaskSpec, gold: Sequence[Example], predictions: Sequence[Example],
                     excluded: Collection[int] = (), *, rank_by: str = "self_confidence") -> LabelIssues:
    """Per-span label issues of a span task's ``gold`` (see the module's docstring), most likely
    wrong first; one issue per extent, so an example may appear more than once. ``excluded``
    are the indices of gold examples the model was trained on.

    Raises NoClassProbabilities for a task whose records are not entity spans,
    ProbabilitiesMissing when a prediction lacks span probabilities, ValueError for an unknown
    ``rank_by``."""
    if task.kind is not Kind.SPANS:
        raise NoClassProbabilities(f"{task.name} is {task.kind.value}: span label issues need entity "
                                   "spans (span extraction tasks)")
    kept, by_index, excluded_training = judged(gold, predictions, excluded, rank_by)
    units: list[tuple[Example, Span | None, Span, float]] = []   # (example, gold span, predicted, p)
    for ex in kept:
        predicted = span_probabilities(task, by_index.get(ex.index), ex)
        gold_at = {(s.start, s.end): s for s in reversed(ex.spans)}   # the first gold span per extent
        units += [(ex, gold_at.get((s.start, s.end)), s, p) for s, p in predicted]
    if len(units) < 2:
        return LabelIssues([], excluded_training, len(kept))
    given = [g.type if g is not None else NO_SPAN for _, g, _, _ in units]
    dists = [{s.type: p, NO_SPAN: 1.0 - p} if p < 1.0 else {s.type: 1.0} for _, _, s, p in units]
    order = [lab.code for lab in task.labels]
    order += sorted({c for c in given + [s.type for _, _, s, _ in units] if c not in order and c != NO_SPAN})
    found = confident_learning(given, dists, order + [NO_SPAN], rank_by)
    issues = [_issue(*units[i], quality) for i, quality in found.ranked]
    return LabelIssues(issues, excluded_training, len(kept))


def _issue(ex: Example, gold: Span | None, pred: Span, p: float, quality: float) -> LabelIssue:
    span = Span(pred.start, pred.end, pred.type, pred.text or ex.text[pred.start:pred.end])
    extent = (span.start, span.end)
    if gold is None:
        reason = f"model finds {describe(span)} at {p:.2f}; gold has no span there"
        return LabelIssue(ex.index, ex.key, quality, reason, NO_SPAN, describe(span), extent)
    if gold.type != pred.type:
        reason = f"model types {span.text!r} [{span.start}, {span.end}) as {span.type} at {p:.2f}; gold says {gold.type}"
        return LabelIssue(ex.index, ex.key, quality, reason, describe(gold), describe(span), extent)
    reason = f"model gives the gold span {describe(gold)} only {p:.2f}"
    return LabelIssue(ex.index, ex.key, quality, reason, describe(gold), NO_SPAN, extent)
