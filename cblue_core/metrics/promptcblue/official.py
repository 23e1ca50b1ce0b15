"""The official PromptCBLUE scorer (``evaluate.py`` + ``evaluators.py``), reimplemented.

The ``calc_*`` functions take the same arguments as the official ones (lists of
``{"sample_id", "answer"}`` per task) and return the same tuples, or raise the same
exception types with the same messages (``AssertionError("sample ordering is wrong!")``...).
:func:`score_structured` is ``calc_scores`` + ``__main__``: it scores a gold and a predicted
``results.json`` dict and returns an :class:`OfficialScore` whose :meth:`~OfficialScore.to_eval_result`
is what ``evaluate.py`` writes, and :meth:`~OfficialScore.all_scores` what it prints.

See docs/metrics.md section 3 for the metric definitions and their quirks. Library
behaviour is reproduced without the libraries: scikit-learn's classification_report in
:mod:`.classification`, transformers' BasicTokenizer in :mod:`.basic_tokenizer`, rouge_chinese
1.0.3 in :mod:`.rouge`. Messages of exceptions raised *inside* scikit-learn are not
reproduced word for word (e.g. for an empty task or mixed label types).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import text2dt as _t2dt
from .basic_tokenizer import tokenized_text
from .classification import report_averages
from .rouge import RougeF, rouge_avg, rouge_pair_scores
from .tasks import (
    CLS_LABELS,
    ERROR_MESSAGES,
    MACRO_CLS_TASKS,
    MAIN_METRIC,
    SCORE_JSON_KEYS,
    SCORER_TASKS,
    task_kind,
)

__all__ = [
    "EMPTY_NLG_TEXT",
    "OfficialError",
    "OfficialScore",
    "TaskScore",
    "calc_cls_task_scores",
    "calc_info_extract_task_scores",
    "calc_nlg_task_scores",
    "calc_nlg_task_scores_by_sessions",
    "calc_text2dt_task_scores",
    "ie_instance_key",
    "nlg_text",
    "score_structured",
    "score_task",
]

EMPTY_NLG_TEXT = "无 。"

# One ``{"sample_id", "answer"}`` entry of a results.json task list.
Item = Mapping[str, Any]
# (P, R, F), (rouge-1, rouge-2, rouge-L) or (tree_lenv_radio, node_f1, path_f1).
Scores = tuple[float, float, float]


@dataclass(frozen=True)
class TaskScore:
    """One task's official scores: ``details`` is its ``all_scores.json`` entry (0-1 scale)."""

    task: str
    metric: str                  # the key of the main metric in ``details``
    details: dict[str, float]
    score_key: str               # its name in ``scoreJson``

    @property
    def value(self) -> float:
        """The main metric on the 0-1 scale (what the overall mean uses)."""
        return self.details[self.metric]

    @property
    def score(self) -> float:
        """The main metric on the 0-100 scale, as in ``scoreJson``."""
        return self.value * 100


@dataclass(frozen=True)
class OfficialError:
    """Why the official scorer would fail: ``code`` is evaluate.py's error code (1, 2, 3, 4
    or 99; -1 when the reference post-processor itself would crash), ``detail`` its
    ``errorDetail`` and ``message`` its ``errorMsg``."""

    code: int
    detail: str
    message: str
    task: str | None = None


@dataclass(frozen=True)
class OfficialScore:
    success: bool
    score: float                         # overall, 0-100 (0 on failure)
    score_json: dict[str, float]         # evaluate.py's ``scoreJson`` (0-100), {} on failure
    per_task: dict[str, TaskScore] = field(default_factory=dict)
    overall: float = 0.0                 # overall on the 0-1 scale
    error: OfficialError | None = None

    def to_eval_result(self) -> dict[str, Any]:
        """Exactly what evaluate.py writes to its output file."""
        if self.success:
            return {"success": True, "score": self.score, "scoreJson": dict(self.score_json)}
        assert self.error is not None
        return {"errorDetail": self.error.detail, "errorMsg": self.error.message, "score": 0,
                "scoreJson": {}, "success": False}

    def all_scores(self) -> dict[str, Any]:
        """The unscaled per-task details plus ``Overall`` (evaluate.py's printout)."""
        out: dict[str, Any] = {t: dict(s.details) for t, s in self.per_task.items()}
        out["Overall"] = self.overall
        return out


# --------------------------------------------------------------------------- shared checks


def _check_lengths(gold: Sequence[Any], pred: Sequence[Any]) -> None:
    if len(gold) != len(pred):
        raise AssertionError()


def _check_ids(gold_item: Item, pred_item: Item) -> None:
    if gold_item["sample_id"] != pred_item["sample_id"]:
        raise AssertionError("sample ordering is wrong!")


def _check_type(gold_answer: Any, pred_answer: Any, kind: type) -> None:
    if not isinstance(gold_answer, kind):
        raise AssertionError()
    if not isinstance(pred_answer, kind):
        raise AssertionError("sample format is wrong!")


# --------------------------------------------------------------------------- IE


def ie_instance_key(inst: Any) -> tuple[str, ...]:
    """An IE instance as the scorer compares it: ``json.dumps`` of its values ordered by
    sorted key name (key names themselves are not compared)."""
    if not isinstance(inst, dict):
        raise AssertionError()
    return tuple(json.dumps(inst[k], ensure_ascii=False) for k in sorted(inst.keys()))


def ie_sample_counts(gold_answer: list[Any], pred_answer: list[Any]) -> tuple[int, int, int]:
    gold_set = {ie_instance_key(x) for x in gold_answer}
    pred_set = {ie_instance_key(x) for x in pred_answer}
    return len(gold_set & pred_set), len(pred_set - gold_set), len(gold_set - pred_set)


def ie_prf(tp: int, fp: int, fn: int) -> Scores:
    if tp:
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        return precision, recall, 2 * precision * recall / (precision + recall)
    return 0, 0, 0   # integers, as the official code returns them


def calc_info_extract_task_scores(list_structured_golden: Sequence[Item],
                                  list_structured_predict: Sequence[Item]) -> Scores:
    """Set-based micro P, R, F (the integers 0, 0, 0 when there is no true positive)."""
    _check_lengths(list_structured_golden, list_structured_predict)
    tp = fp = fn = 0
    for g, p in zip(list_structured_golden, list_structured_predict):
        _check_ids(g, p)
        _check_type(g["answer"], p["answer"], list)
        a, b, c = ie_sample_counts(g["answer"], p["answer"])
        tp, fp, fn = tp + a, fp + b, fn + c
    return ie_prf(tp, fp, fn)


# --------------------------------------------------------------------------- classification


def cls_pair(gold_item: Item, pred_item: Item, list_labels: Sequence[str] | None) -> tuple[Any, Any]:
    """(gold label, predicted label after the empty -> ``list_labels[0]`` fallback)."""
    if pred_item["sample_id"] != gold_item["sample_id"]:
        raise AssertionError("sample ordering is wrong!")
    pred_label = pred_item["answer"]
    gold_label = gold_item["answer"]
    if gold_label == "":
        raise AssertionError()
    if pred_label == "":
        if list_labels is None:
            # What indexing the official ``list_labels=None`` default raises.
            raise TypeError("'NoneType' object is not subscriptable")
        pred_label = list_labels[0]
    return gold_label, pred_label


def cls_scores(pairs: Sequence[tuple[Any, Any]], return_macro: bool) -> Scores:
    avgs = report_averages([g for g, _ in pairs], [p for _, p in pairs])
    return avgs["macro avg" if return_macro else "weighted avg"]


def calc_cls_task_scores(list_structured_golden: Sequence[Item], list_structured_predict: Sequence[Item],
                         list_labels: Sequence[str] | None = None, return_macro: bool = False) -> Scores:
    """classification_report's macro avg (``return_macro``) or weighted avg P, R, F."""
    _check_lengths(list_structured_golden, list_structured_predict)
    pairs = [cls_pair(g, p, list_labels) for p, g in zip(list_structured_predict, list_structured_golden)]
    return cls_scores(pairs, return_macro)


# --------------------------------------------------------------------------- ROUGE


def nlg_text(text: str) -> str:
    """BasicTokenizer tokens joined by spaces; an empty result becomes ``"无 。"``."""
    text = tokenized_text(text)
    return text if text.strip() else EMPTY_NLG_TEXT


def nlg_sample_scores(gold_item: Item, pred_item: Item) -> tuple[RougeF]:
    _check_ids(gold_item, pred_item)
    _check_type(gold_item["answer"], pred_item["answer"], str)
    return (rouge_pair_scores(nlg_text(pred_item["answer"]), nlg_text(gold_item["answer"])),)


def mrg_sample_pairs(gold_item: Item, pred_item: Item) -> list[tuple[str, str]]:
    """(prediction, reference) texts, one per section key of the gold dict."""
    _check_ids(gold_item, pred_item)
    gold, pred = gold_item["answer"], pred_item["answer"]
    pairs = []
    for key in gold:
        p = pred.get(key, "").strip()
        g = gold[key].strip()
        pairs.append((nlg_text(p), nlg_text(g)))
    return pairs


def mrg_sample_scores(gold_item: Item, pred_item: Item) -> tuple[RougeF, ...]:
    return tuple(rouge_pair_scores(p, g) for p, g in mrg_sample_pairs(gold_item, pred_item))


def calc_nlg_task_scores(list_structured_golden: Sequence[Item],
                         list_structured_predict: Sequence[Item]) -> Scores:
    """Mean ROUGE-1/2/L F over samples (MedDG)."""
    _check_lengths(list_structured_golden, list_structured_predict)
    texts = []
    for g, p in zip(list_structured_golden, list_structured_predict):
        _check_ids(g, p)
        _check_type(g["answer"], p["answer"], str)
        texts.append((nlg_text(p["answer"]), nlg_text(g["answer"])))
    avg = rouge_avg([rouge_pair_scores(h, r) for h, r in texts])
    return avg.rouge1, avg.rouge2, avg.rougeL


def calc_nlg_task_scores_by_sessions(list_structured_golden: Sequence[Item],
                                     list_structured_predict: Sequence[Item]) -> Scores:
    """Mean ROUGE-1/2/L F over every (sample, gold section) pair (IMCS-V2-MRG)."""
    _check_lengths(list_structured_golden, list_structured_predict)
    texts: list[tuple[str, str]] = []
    for g, p in zip(list_structured_golden, list_structured_predict):
        texts.extend(mrg_sample_pairs(g, p))
    avg = rouge_avg([rouge_pair_scores(h, r) for h, r in texts])
    return avg.rouge1, avg.rouge2, avg.rougeL


# --------------------------------------------------------------------------- Text2DT


def text2dt_sample_counts(gold_item: Item, pred_item: Item) -> _t2dt.TreeCounts:
    _check_ids(gold_item, pred_item)
    _check_type(gold_item["answer"], pred_item["answer"], list)
    return _t2dt.tree_counts(pred_item["answer"], gold_item["answer"])


def calc_text2dt_task_scores(list_structured_golden: Sequence[Item],
                             list_structured_predict: Sequence[Item]) -> Scores:
    """(tree_lenv_radio, node_f1, path_f1)."""
    _check_lengths(list_structured_golden, list_structured_predict)
    counts = [text2dt_sample_counts(g, p) for g, p in zip(list_structured_golden, list_structured_predict)]
    scores = _t2dt.aggregate(counts)
    return scores["tree_lenv_radio"], scores["node_f1"], scores["path_f1"]


# --------------------------------------------------------------------------- per task / whole run


def _details(task: str, values: Sequence[float]) -> dict[str, float]:
    kind = task_kind(task)
    if kind in ("nlg", "nlg_sections"):
        names = ("rouge1", "rouge2", "rougeL")
    elif kind == "tree":
        names = ("tree_lenv_radio", "node_f1", "path_f1")
    elif task in MACRO_CLS_TASKS:
        names = ("macro-precision", "macro-recall", "macro-f1")
    else:
        names = ("precision", "recall", "f1")
    return dict(zip(names, values))


def make_task_score(task: str, values: Sequence[float]) -> TaskScore:
    return TaskScore(task=task, metric=MAIN_METRIC[task], details=_details(task, values),
                     score_key=SCORE_JSON_KEYS[task])


def score_task(task: str, gold: Sequence[Item], pred: Sequence[Item]) -> TaskScore:
    """Score one task's lists with its official metric; exceptions propagate."""
    kind = task_kind(task)
    if kind == "ie":
        values = calc_info_extract_task_scores(gold, pred)
    elif kind == "cls":
        values = calc_cls_task_scores(gold, pred, list_labels=list(CLS_LABELS[task]),
                                      return_macro=task in MACRO_CLS_TASKS)
    elif kind == "nlg":
        values = calc_nlg_task_scores(gold, pred)
    elif kind == "nlg_sections":
        values = calc_nlg_task_scores_by_sessions(gold, pred)
    else:
        values = calc_text2dt_task_scores(gold, pred)
    return make_task_score(task, tuple(values))


def _failure(code: int, message: str | None = None, task: str | None = None) -> OfficialScore:
    detail = ERROR_MESSAGES[code]
    err = OfficialError(code=code, detail=detail, message=detail if message is None else message, task=task)
    return OfficialScore(success=False, score=0, score_json={}, error=err)


def failed(error: OfficialError) -> OfficialScore:
    """An unsuccessful :class:`OfficialScore` carrying ``error``."""
    return OfficialScore(success=False, score=0, score_json={}, error=error)


def score_structured(gold: Mapping[str, Any], pred: Mapping[str, Any]) -> OfficialScore:
    """``evaluate.py`` on two ``results.json`` dicts (gold first), all 18 tasks in its order.

    Args:
        gold: the gold ``results.json``: task -> list of ``{"sample_id", "answer"}``.
        pred: the predicted one.

    Returns:
        An :class:`OfficialScore`; when the official scorer would fail, ``success`` is False and
        ``error`` holds its error code and messages.

    Examples:
        >>> from cblue_core.metrics.promptcblue.tasks import SCORER_TASKS
        >>> result = score_structured({t: [] for t in SCORER_TASKS}, {})   # no predicted task at all
        >>> result.success, result.error.code, result.error.task
        (False, 1, 'CMeEE-V2')
    """
    try:
        return _calc_scores(gold, pred)
    except Exception as exc:  # noqa: BLE001 - evaluate.py's __main__ turns these into error 99
        return _failure(99, str(exc))


def _calc_scores(gold: Mapping[str, Any], pred: Mapping[str, Any]) -> OfficialScore:
    per_task: dict[str, TaskScore] = {}
    last_error: OfficialScore | None = None
    for task in SCORER_TASKS:
        if task not in gold:
            raise AssertionError()
        if task not in pred:
            return _failure(1, task=task)
        gts, preds = gold[task], pred[task]
        if len(gts) != len(preds):
            return _failure(1, task=task)
        for g, p in zip(gts, preds):
            if not isinstance(p, dict) or "sample_id" not in p:
                last_error = _failure(2, task=task)
                break
            if g.get("sample_id") != p.get("sample_id"):
                last_error = _failure(3, task=task)
                break
        # As in evaluate.py, the metric still runs after errors 2 and 3.
        try:
            per_task[task] = score_task(task, gts, preds)
        except Exception as exc:  # noqa: BLE001 - evaluate.py reports any metric failure as error 4
            return _failure(4, str(exc), task=task)
    if last_error is not None:
        return last_error
    total = 0.0
    for task in SCORER_TASKS:
        total += per_task[task].value
    overall = total / len(SCORER_TASKS)
    score_json = {SCORE_JSON_KEYS[t]: per_task[t].value * 100 for t in SCORER_TASKS}
    score_json["score"] = overall * 100
    return OfficialScore(success=True, score=overall * 100, score_json=score_json, per_task=per_task,
                         overall=overall)
