"""One prediction judged against its gold, for showing right and wrong side by side (the demo,
the Live page): which spans are right, wrong or missed, and whether the whole answer is right."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..records import Example, Span
from ..tasks import TaskSpec
from .taxonomy import TAXONOMIES, categorize

CORRECT = ("correct", "correct_term")


@dataclass(frozen=True)
class Judgement:
    correct: bool | None                    # None: no way to judge this task here
    marks: dict[Span, str] = field(default_factory=dict)   # span -> error category
    right: int = 0                          # items (spans, triples, terms, labels) right
    wrong: int = 0                          # items wrong, missed or spurious


def judge(task: TaskSpec, gold: Example, pred: Example) -> Judgement:
    """The prediction's items against the gold's, by the task's error taxonomy."""
    if task.scorer not in TAXONOMIES:
        return Judgement(None)
    rows = categorize(task, [gold], [pred])
    marks: dict[Span, str] = {}
    right = wrong = 0
    for row in rows:
        ok = row.category in CORRECT
        right += ok
        wrong += not ok
        for side in (row.gold, row.pred):
            if isinstance(side, Span):
                marks[side] = row.category
    return Judgement(wrong == 0, marks, right, wrong)
