"""Evaluate PromptCBLUE predictions given as prompt records: match by ``sample_id``, parse
with the official post-processor, score officially and cleanly, expose per-sample statistics.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .clean import CleanScore, CleanTaskScore, clean_metric_from_stats, clean_sample_stats, clean_scores
from .official import OfficialError, OfficialScore, TaskScore, failed, score_structured, score_task
from .parse import StructuredParse, structure_with_issues
from .stats import official_metric_from_stats, official_sample_stats
from .tasks import SCORER_TASKS, canonical_task

__all__ = [
    "PromptCBLUEEvaluation",
    "PromptCBLUEInputError",
    "SampleIdError",
    "TaskMismatchError",
    "evaluate_promptcblue",
    "metric_from_stats",
    "sample_stats",
]

PARSE_CRASH_CODE = -1
PARSE_CRASH_DETAIL = "The reference post-processor would crash on the predictions (no results.json)."


class PromptCBLUEInputError(ValueError):
    """The gold and predicted records cannot be matched."""


class SampleIdError(PromptCBLUEInputError):
    """Missing, extra or duplicate ``sample_id`` values (each list is in input order)."""

    def __init__(self, *, missing: Sequence[str] = (), extra: Sequence[str] = (),
                 duplicates: Sequence[str] = (), gold_duplicates: Sequence[str] = (),
                 without_id: int = 0):
        self.missing, self.extra = list(missing), list(extra)
        self.duplicates, self.gold_duplicates = list(duplicates), list(gold_duplicates)
        self.without_id = without_id
        parts = []
        for label, ids in (("missing predictions", self.missing), ("extra predictions", self.extra),
                           ("duplicate predictions", self.duplicates),
                           ("duplicate gold ids", self.gold_duplicates)):
            if ids:
                shown = ", ".join(map(repr, ids[:10])) + (f" ... ({len(ids)} in all)" if len(ids) > 10 else "")
                parts.append(f"{label}: {shown}")
        if without_id:
            parts.append(f"{without_id} record(s) without a sample_id")
        super().__init__("; ".join(parts))


class TaskMismatchError(PromptCBLUEInputError):
    """A prediction names another task than its gold record: ``mismatches`` holds
    ``(sample_id, gold task, predicted task)``."""

    def __init__(self, mismatches: Sequence[tuple[str, str, str]]):
        self.mismatches = list(mismatches)
        shown = ", ".join(f"{s!r}: {g} vs {p}" for s, g, p in self.mismatches[:10])
        super().__init__(f"prediction task differs from gold for {len(self.mismatches)} sample(s): {shown}")


def _ids(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], int]:
    ids, without = [], 0
    for r in records:
        if "sample_id" in r:
            ids.append(r["sample_id"])
        else:
            without += 1
    return ids, without


def _align(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    gold_ids, gold_without = _ids(gold)
    pred_ids, pred_without = _ids(pred)
    gold_dup = [i for i, c in Counter(gold_ids).items() if c > 1]
    pred_dup = [i for i, c in Counter(pred_ids).items() if c > 1]
    gold_set, pred_set = set(gold_ids), set(pred_ids)
    missing = [i for i in gold_ids if i not in pred_set]
    extra = [i for i in pred_ids if i not in gold_set]
    if gold_dup or pred_dup or missing or extra or gold_without or pred_without:
        raise SampleIdError(missing=missing, extra=extra, duplicates=pred_dup, gold_duplicates=gold_dup,
                            without_id=gold_without + pred_without)
    by_id = {r["sample_id"]: r for r in pred}
    aligned, mismatches = [], []
    for g in gold:
        p = by_id[g["sample_id"]]
        if "target" not in p:
            raise PromptCBLUEInputError(f"prediction {g['sample_id']!r} has no 'target'")
        gt, pt = canonical_task(g["task_dataset"]), p.get("task_dataset")
        if pt is not None and canonical_task(pt) != gt:
            mismatches.append((g["sample_id"], g["task_dataset"], pt))
        # The gold record's task and answer_choices drive the parse; the prediction's text is parsed.
        aligned.append({**g, "target": p["target"]})
    if mismatches:
        raise TaskMismatchError(mismatches)
    return aligned


@dataclass
class PromptCBLUEEvaluation:
    """Official and clean scores of one prediction set.

    * ``official``: the whole ``evaluate.py`` run over its 18 tasks (it fails, as the official
      scorer does, when a task is missing or a metric fails, e.g. Text2DT without any triple);
    * ``tasks``: the official metric of every task that has gold samples, scored on its own
      (equal to the run's per-task numbers when the run succeeds); ``task_errors`` says why a
      task has none;
    * ``clean``: :mod:`.clean` scores; ``gold_parse``/``pred_parse``: the structured answers and
      parse issues.
    """

    official: OfficialScore
    tasks: dict[str, TaskScore]
    task_errors: dict[str, str]
    clean: CleanScore
    gold_parse: StructuredParse
    pred_parse: StructuredParse
    present_tasks: tuple[str, ...]

    @property
    def score(self) -> float | None:
        """The official overall score (0-100), or None when the official run fails."""
        return self.official.score if self.official.success else None

    @property
    def parse_failures(self) -> dict[str, dict[str, int]]:
        """Prediction parse issues per task: ``{"error", "dropped", "invalid"}`` counts."""
        counts = self.pred_parse.issue_counts()
        return {t: counts.get(t, {"error": 0, "dropped": 0, "invalid": 0}) for t in self.present_tasks}

    def sample_stats(self, mode: str = "official") -> dict[str, list[tuple[Any, ...]]]:
        """Per-task lists of per-sample statistics (see :func:`sample_stats`)."""
        return sample_stats(self.gold_parse.results, self.pred_parse.results, mode=mode, tasks=self.present_tasks)

    def to_json(self) -> dict[str, Any]:
        err = self.official.error
        return {
            "score": self.score,
            "tasks": {t: (self.tasks[t].score if t in self.tasks else None) for t in self.present_tasks},
            "clean": self.clean.to_json(),
            "parse_failures": self.parse_failures,
            "official": {
                "success": self.official.success,
                "error": None if err is None else {"code": err.code, "detail": err.detail,
                                                   "message": err.message, "task": err.task},
                "score_json": dict(self.official.score_json),
            },
            "task_errors": dict(self.task_errors),
        }


def evaluate_promptcblue(gold_records: Sequence[Mapping[str, Any]], pred_records: Sequence[Mapping[str, Any]],
                         *, on_parse_error: str = "fail") -> PromptCBLUEEvaluation:
    r"""Score prompt-record predictions against prompt-record gold, matched by ``sample_id``.

    The gold records' ``task_dataset`` and ``answer_choices`` drive the parse of each
    prediction's ``target``. Gold must parse cleanly (else :class:`~.parse.PromptParseError`).
    Where the official post-processor would crash on a prediction, ``on_parse_error="fail"``
    makes the official result unsuccessful (error code -1), as the official pipeline would be,
    and ``"skip"`` scores it with the offending lines skipped. Clean mode always skips and counts.

    Args:
        gold_records: PromptCBLUE records (``sample_id``, ``task_dataset``, ``answer_choices``,
            ``target``: the gold generation).
        pred_records: the predictions: ``sample_id`` and ``target`` (the model's generation);
            ``task_dataset``, when present, must name the gold record's task.
        on_parse_error: ``"fail"`` or ``"skip"`` (see above).

    Returns:
        A :class:`PromptCBLUEEvaluation`: ``.score`` the official overall score (0-100; None
        unless all 18 tasks are present and scorable), ``.tasks`` the official score of each
        present task, ``.clean`` the clean scores, ``.parse_failures`` and ``.to_json()``.

    Raises:
        SampleIdError: missing, extra or duplicate ``sample_id`` values.
        TaskMismatchError: a prediction names another task than its gold record.

    Examples:
        Gold entities 肺炎 (疾病) and 发热 (临床表现); the prediction finds 肺炎 and invents 咳嗽,
        so P = R = F1 = 1/2:

        >>> gold = [{"sample_id": "s1", "task_dataset": "CMeEE-V2", "answer_choices": ["疾病", "临床表现"],
        ...          "target": "上述句子中的实体包含：\n疾病实体：肺炎\n临床表现实体：发热"}]
        >>> pred = [{"sample_id": "s1", "target": "上述句子中的实体包含：\n疾病实体：肺炎，咳嗽"}]
        >>> ev = evaluate_promptcblue(gold, pred)
        >>> ev.tasks["CMeEE-V2"].score, ev.clean.per_task["CMeEE-V2"].score
        (50.0, 50.0)
        >>> ev.score is None   # the official overall score needs all 18 tasks
        True
        >>> ev.parse_failures
        {'CMeEE-V2': {'error': 0, 'dropped': 0, 'invalid': 0}}
    """
    if on_parse_error not in ("fail", "skip"):
        raise ValueError("on_parse_error must be 'fail' or 'skip'")
    gold_records, pred_records = list(gold_records), list(pred_records)
    aligned = _align(gold_records, pred_records)
    gold_parse = structure_with_issues(gold_records, strict=True)
    pred_parse = structure_with_issues(aligned, strict=False)
    present = tuple(t for t in SCORER_TASKS if gold_parse.results[t])
    crashes = pred_parse.issues("error")
    crashed_tasks = {i.task for i in crashes}

    if crashes and on_parse_error == "fail":
        first = crashes[0]
        official = failed(OfficialError(PARSE_CRASH_CODE, PARSE_CRASH_DETAIL,
                                        f"sample {first.sample_id!r}: {first.reason} (line {first.line!r})",
                                        first.task))
    else:
        official = score_structured(gold_parse.results, pred_parse.results)

    tasks: dict[str, TaskScore] = {}
    task_errors: dict[str, str] = {}
    for t in present:
        if official.success and t in official.per_task:
            tasks[t] = official.per_task[t]   # already scored by the full official run
            continue
        if t in crashed_tasks and on_parse_error == "fail":
            task_errors[t] = "the reference post-processor would crash on a prediction of this task"
            continue
        try:
            tasks[t] = score_task(t, gold_parse.results[t], pred_parse.results[t])
        except Exception as exc:  # noqa: BLE001 - reported, as evaluate.py reports error 4
            task_errors[t] = f"{type(exc).__name__}: {exc}"
    clean = clean_scores(gold_parse.results, pred_parse.results, tasks=present,
                         parse_issues=pred_parse.issue_counts())
    return PromptCBLUEEvaluation(official=official, tasks=tasks, task_errors=task_errors, clean=clean,
                                 gold_parse=gold_parse, pred_parse=pred_parse, present_tasks=present)


def sample_stats(gold: Mapping[str, Sequence[Mapping[str, Any]]],
                 pred: Mapping[str, Sequence[Mapping[str, Any]]], *, mode: str = "official",
                 tasks: Iterable[str] | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Per-task lists of per-sample statistics from two ``results.json``-shaped dicts.

    ``mode="official"``: :func:`~.stats.official_sample_stats`; ``"clean"``:
    :func:`~.clean.clean_sample_stats`. Without ``tasks``, every task with gold samples.
    Feed any resample of a task's list to :func:`metric_from_stats`.
    """
    gold = {canonical_task(k): v for k, v in gold.items()}
    pred = {canonical_task(k): v for k, v in pred.items()}
    names = [canonical_task(t) for t in tasks] if tasks is not None else [t for t in SCORER_TASKS if gold.get(t)]
    fn = {"official": official_sample_stats, "clean": clean_sample_stats}[mode]
    return {t: fn(t, gold.get(t, []), pred.get(t, [])) for t in names}


def metric_from_stats(task: str, stats: Sequence[tuple[Any, ...]], *,
                      mode: str = "official") -> TaskScore | CleanTaskScore:
    """A task's score from per-sample statistics (official :class:`TaskScore` or clean
    :class:`CleanTaskScore`)."""
    if mode == "official":
        return official_metric_from_stats(task, stats)
    if mode == "clean":
        return clean_metric_from_stats(task, stats)
    raise ValueError("mode must be 'official' or 'clean'")
