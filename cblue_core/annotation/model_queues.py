"""Review queues driven by one run's model: "likely gold errors" (confident learning on its
probabilities: :mod:`.label_issues` for classes, :mod:`.span_issues` for entity spans) and
"most uncertain" (:mod:`.uncertainty`), over the current gold of the run's split.

Both leave out the examples the run's model was trained on and say how many; both give
:class:`~cblue_core.annotation.review.ReviewItem` rows (higher score first), like the review
reasons, so that a page draws every queue the same way.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ..records import Example
from ..tasks import Kind, TaskSpec, get_task
from .label_issues import ONE_CLASS_KINDS, LabelIssues, find_label_issues
from .mention_issues import find_mention_issues
from .review import ReviewItem
from .span_issues import find_span_issues
from .uncertainty import rank_uncertain

GOLD_ERRORS = "likely_gold_error"
UNCERTAIN = "uncertain"
QUEUE_KINDS = (GOLD_ERRORS, UNCERTAIN)


@dataclass(frozen=True)
class ModelQueue:
    run_id: int
    kind: str                                  # one of QUEUE_KINDS
    items: list[ReviewItem] = field(default_factory=list)
    examined: int = 0                          # gold examples judged
    excluded_training: int = 0                 # left out: the model was trained on them
    training_known: bool = False               # False: the run does not say what its model saw
    found: int = 0                             # items in the whole queue (``items`` may hold the first only)


# Label issues per item of a record, by the task's kind; one class per record otherwise.
ISSUE_FINDERS = {Kind.SPANS: find_span_issues, Kind.RELATIONS: find_mention_issues}


def supports(task: TaskSpec, kind: str) -> bool:
    """Whether a model's probabilities on this task can drive the ``kind`` queue: gold errors
    for one class per record, entity spans and relation mentions; uncertainty for the first two."""
    one_per_item = task.kind in ONE_CLASS_KINDS or task.kind is Kind.SPANS
    return one_per_item or (kind == GOLD_ERRORS and task.kind in ISSUE_FINDERS)


def drives_queues(run) -> bool:
    """Whether a run can carry a model's probabilities: a model run (an imported file or an
    LLM endpoint's answers carry labels only)."""
    return run.source == "model"


def find_issues(task: TaskSpec, gold: Sequence[Example], predictions: Sequence[Example],
                excluded: Collection[int] = (), *, rank_by: str = "self_confidence") -> LabelIssues:
    """Label issues of any task that has them: per span for entity spans, per candidate mention
    for relations, per record for one class per record (the finders refuse the other kinds)."""
    finder = ISSUE_FINDERS.get(task.kind, find_label_issues)
    return finder(task, gold, predictions, excluded, rank_by=rank_by)


def training_indices(ws, run) -> list[int] | None:
    """The gold indices a run's model was trained on, as stored with the run (settled now for an
    older run whose model folder is still found), or None when the run does not know (an imported
    file, a model that declares no training records)."""
    from ..runs.seen_split import settle

    ts = settle(ws, run)
    return ws.runs.seen_indices([run.run_id]) if ts is not None and ts.declared else None


def model_queue(ws, run_id: int, kind: str, *, limit: int | None = 100, measure: str = "margin") -> ModelQueue:
    """The ``kind`` queue of run ``run_id`` on its split's current gold, its first ``limit``
    items (``measure``: the uncertainty of class probabilities, see :mod:`.uncertainty`). Raises ValueError for an unknown run or kind, and the finders' errors
    (NoClassProbabilities, ProbabilitiesMissing) for a run that cannot drive the queue."""
    if kind not in QUEUE_KINDS:
        raise ValueError(f"unknown queue {kind!r}; known: {', '.join(QUEUE_KINDS)}")
    run = ws.runs.get(run_id)
    if run is None:
        raise ValueError(f"no run {run_id} in the workspace")
    task = get_task(run.task)
    predictions = ws.runs.predictions(run_id)
    have = {p.index for p in predictions}   # a run on the start of the split (run --limit)
    gold = [g for g in ws.annotations.gold_examples(run.dataset_id) if g.index in have]
    seen = training_indices(ws, run)
    if kind == GOLD_ERRORS:
        issues = find_issues(task, gold, predictions, seen or ())
        items = [ReviewItem(i.idx, GOLD_ERRORS, round(1.0 - i.score, 6), i.reason) for i in issues.issues]
        examined, excluded = issues.examined, issues.excluded_training
    else:
        ranked = rank_uncertain(task, gold, predictions, seen or (), measure=measure)
        items = [ReviewItem(it.idx, UNCERTAIN, it.score, it.reason) for it in ranked.items]
        examined, excluded = ranked.examined, ranked.excluded_training
    return ModelQueue(run_id, kind, items[:limit] if limit else items, examined, excluded, seen is not None,
                      found=len(items))
