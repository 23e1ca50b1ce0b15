"""One LLM answer judged against its gold, for the Live page: the structured answer the
benchmark's own post-processing reads from the text (PromptCBLUE's official parser, CliMedBench's
letter / order extraction) and each of its items marked right, wrong or missed."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..metrics.climedbench import item_score
from ..metrics.promptcblue import parse_record
from ..records import Example
from ..tasks import TaskSpec

RIGHT, WRONG, MISSED = "right", "wrong", "missed"


@dataclass(frozen=True)
class AnswerItem:
    text: str
    mark: str | None            # RIGHT, WRONG, MISSED; None when there is no gold to judge by


@dataclass(frozen=True)
class LlmVerdict:
    items: list[AnswerItem] = field(default_factory=list)
    correct: bool | None = None  # the whole answer; None: no gold, or a free-text answer
    score: float | None = None   # a free-text answer's similarity, an order's Kendall tau
    notes: list[str] = field(default_factory=list)   # parse problems, what the score is


def _item_text(item: Any) -> str:
    if isinstance(item, dict):
        return "；".join(f"{k}：{_item_text(v)}" for k, v in item.items())
    if isinstance(item, (list, tuple)):
        return "，".join(_item_text(v) for v in item)
    return str(item)


def _canon(item: Any) -> str:
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


def _record(ex: Example, context: Example) -> dict[str, Any]:
    """The PromptCBLUE record the parser reads: the sub-task and choices of ``context``."""
    rec = dict(context.raw) if isinstance(context.raw, dict) else {}
    rec.setdefault("task_dataset", context.meta.get("task_dataset", context.label))
    if "answer_choices" not in rec and context.choices:
        rec["answer_choices"] = list(context.choices)
    rec["target"] = ex.target
    return rec


def _promptcblue(gold: Example | None, pred: Example) -> LlmVerdict:
    context = gold or pred
    if not (context.label or context.meta.get("task_dataset")):
        return LlmVerdict(notes=[("no PromptCBLUE sub-task is known for a typed prompt: the answer is "
                                 "shown as it came")])
    got = parse_record(_record(pred, context), strict=False)
    notes = [f"parse: {i.reason}" for i in got.failures]
    if gold is None:
        answers = got.answer if isinstance(got.answer, list) else [got.answer]
        return LlmVerdict([AnswerItem(_item_text(a), None) for a in answers if a not in ("", None)], notes=notes)
    want = parse_record(_record(gold, gold), strict=False).answer
    if isinstance(want, list) and isinstance(got.answer, list):
        wanted = {_canon(w) for w in want}
        given = {_canon(g) for g in got.answer}
        items = [AnswerItem(_item_text(g), RIGHT if _canon(g) in wanted else WRONG) for g in got.answer]
        items += [AnswerItem(_item_text(w), MISSED) for w in want if _canon(w) not in given]
        return LlmVerdict(items, correct=wanted == given, notes=notes)
    same = _canon(want) == _canon(got.answer)
    items = [AnswerItem(_item_text(got.answer), RIGHT if same else WRONG)]
    if not same:
        items.append(AnswerItem(_item_text(want), MISSED))
    return LlmVerdict(items, correct=same, notes=notes)


def _climedbench(gold: Example | None, pred: Example) -> LlmVerdict:
    if gold is None:
        return LlmVerdict(notes=["no reference for a typed question: the answer is shown as it came"])
    s = item_score(gold, pred.target)
    if s["metric"] in ("accuracy", "kendall_tau"):
        if s["failed"]:
            return LlmVerdict([AnswerItem(gold.target, MISSED)], correct=False, score=s["score"],
                              notes=["no answer letter or order could be read from the answer"])
        right = s["score"] == 1.0
        items = [AnswerItem(str(s["extracted"]), RIGHT if right else WRONG)]
        if not right:
            items.append(AnswerItem(gold.target, MISSED))
        note = [f"Kendall tau {s['score']:.2f}"] if s["metric"] == "kendall_tau" and s["score"] is not None else []
        return LlmVerdict(items, correct=right, score=s["score"], notes=note)
    return LlmVerdict([], score=s["score"], notes=[(f"free-text answer: {s['metric']} {s['score'] or 0:.2f} "
                                                   "against the reference")])


JUDGES: dict[str, Callable[[Example | None, Example], LlmVerdict]] = {
    "promptcblue": _promptcblue,
    "climedbench": _climedbench,
}


def judge_llm_answer(task: TaskSpec, gold: Example | None, pred: Example) -> LlmVerdict:
    """The answer in ``pred.target`` read the way the task's scorer reads it, marked against
    ``gold`` (None for a typed prompt: the items are then unmarked)."""
    judge = JUDGES.get(task.scorer)
    if judge is None:
        return LlmVerdict(notes=[f"{task.name} answers are not judged here"])
    return judge(gold, pred)
