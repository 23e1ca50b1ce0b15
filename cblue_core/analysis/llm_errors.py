"""Error rows for LLM output (PromptCBLUE): parse failures, hallucinated mentions, answers outside
the offered choices, and right/wrong answers per sample.

Each prediction is parsed by the official post-processor (lenient: the lines it would crash on
are kept as parse failures, with the line). A *hallucinated mention* is a predicted string
(entity, subject, object, core word, descriptor, anatomy, finding) that does not occur in the
prompt; an answer *outside the choices* is a classification answer that is not among the
prompt's options (nor the task's "none of the above").
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..metrics.promptcblue import parse_record
from ..records import Example

MENTION_KEYS = ("entity", "subject", "object", "主体词", "描述词", "解剖部位")
NONE_OF_THE_ABOVE = "非上述类型"
CLASSIFICATION = {"CHIP-CTC", "CHIP-STS", "KUAKE-IR", "KUAKE-QIC", "KUAKE-QQR", "KUAKE-QTR", "IMCS-V2-DAC"}


def _mentions(answer: Any) -> Iterable[str]:
    if isinstance(answer, list):
        for item in answer:
            yield from _mentions(item)
    elif isinstance(answer, dict):
        for k, v in answer.items():
            if k in MENTION_KEYS:
                if isinstance(v, str):
                    yield v
                elif isinstance(v, list):
                    yield from (x for x in v if isinstance(x, str))
                elif isinstance(v, dict):
                    yield from _mentions(v)


def _canon(answer: Any) -> str:
    return json.dumps(answer, ensure_ascii=False, sort_keys=True)


def _record(ex: Example, gold: Example) -> dict:
    rec = dict(gold.raw) if isinstance(gold.raw, dict) else {}
    rec["target"] = ex.target
    return rec


def llm_error_rows(gold: list[Example], pred: list[Example]) -> list[dict]:
    """One row per sample (correct / wrong_answer) plus one per parse failure, hallucinated
    mention and out-of-choice answer; ``gold_label``/``pred_label`` hold the answers of the
    classification tasks (for a confusion matrix), else the task name."""
    rows: list[dict] = []
    for g, p in zip(gold, pred):
        task = g.label or ""
        gold_rec = _record(g, g)
        gold_rec["target"] = g.target
        g_parsed = parse_record(gold_rec, strict=False)
        p_parsed = parse_record(_record(p, g), strict=False)
        is_cls = task in CLASSIFICATION
        same = _canon(g_parsed.answer) == _canon(p_parsed.answer) if not isinstance(
            g_parsed.answer, list) else sorted(map(_canon, g_parsed.answer)) == sorted(map(_canon, p_parsed.answer))
        rows.append({"idx": g.index, "category": "correct" if same else "wrong_answer",
                     "gold_label": str(g_parsed.answer) if is_cls else task,
                     "pred_label": str(p_parsed.answer) if is_cls else task,
                     "gold_text": _short(g.target), "pred_text": _short(p.target), "tags": [task]})
        for issue in p_parsed.failures:
                rows.append({"idx": g.index, "category": "parse_failure", "pred_text": issue.line,
                             "gold_label": task, "pred_label": task, "tags": [task, issue.reason[:60]]})
        for m in _mentions(p_parsed.answer):
            if m and m not in g.text:
                rows.append({"idx": g.index, "category": "hallucinated_mention", "pred_text": m,
                             "gold_label": task, "pred_label": task, "tags": [task]})
        if is_cls and isinstance(p_parsed.answer, str) and g.choices and p_parsed.answer \
                and p_parsed.answer not in g.choices and p_parsed.answer != NONE_OF_THE_ABOVE:
            rows.append({"idx": g.index, "category": "answer_outside_choices", "pred_text": p_parsed.answer,
                         "gold_label": task, "pred_label": task, "tags": [task]})
    return rows


def _short(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[:n] + "…"
