"""One entry point for scoring any task: aligned gold and predictions -> :class:`Evaluation`.

CBLUE 1.0/2.0 and CliMedBench go through :mod:`cblue_core.metrics.registry` (metrics on the 0-1
scale, bootstrap intervals, per-label counts) and :mod:`cblue_core.analysis.taxonomy` (error
rows); PromptCBLUE goes through the official post-processor and scorer
(:mod:`cblue_core.metrics.promptcblue`, 0-100 as the official output) and
:mod:`cblue_core.analysis.llm_errors`. Which path a task takes is looked up by its scorer name.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..records import Example, Span, Triple
from ..tasks import TaskSpec

if TYPE_CHECKING:
    from ..analysis.taxonomy import ErrorRow


@dataclass
class Evaluation:
    task: str
    headline: str
    metrics: dict[str, float]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    per_label: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scale: int = 1                      # 1: metrics on 0-1; 100: PromptCBLUE's official 0-100
    extra: dict[str, Any] = field(default_factory=dict)
    error_rows: list[dict] = field(default_factory=list)
    stats: Any = None                   # per-example sufficient statistics (bootstrap, compare)

    @property
    def value(self) -> float | None:
        return self.metrics.get(self.headline)

    def summary(self) -> dict[str, Any]:
        """What a run stores and the CLI prints (no per-example arrays, no error rows)."""
        return {"task": self.task, "headline": self.headline, "scale": self.scale,
                "metrics": self.metrics,
                "intervals": {k: [lo, hi] for k, (lo, hi) in self.intervals.items()},
                "per_label": self.per_label, "notes": self.notes, "extra": self.extra}


def _registry_path(task: TaskSpec, gold: list[Example], pred: list[Example], *, schemas=None,
                   icd_terms=None, n_boot: int = 1000, seed: int = 0) -> Evaluation:
    from ..analysis.taxonomy import TAXONOMIES, categorize
    from ..metrics.registry import score

    result = score(task, gold, pred, n_boot=n_boot, seed=seed)
    rows: list[dict] = []
    if task.scorer in TAXONOMIES:
        rows = [error_row(r) for r in categorize(task, gold, pred, schemas=schemas, icd_terms=icd_terms)]
    summary = result.to_dict()
    return Evaluation(task.name, result.headline, dict(result.metrics), dict(result.intervals),
                      summary["per_label"], list(result.notes), 1, summary.get("extra", {}), rows,
                      result.stats)


def _promptcblue_path(task: TaskSpec, gold: list[Example], pred: list[Example], **_: Any) -> Evaluation:
    from ..analysis.llm_errors import llm_error_rows
    from ..metrics.promptcblue import evaluate_promptcblue

    gold_records = [g.raw for g in gold]
    pred_records = []
    for g, p in zip(gold, pred):
        rec = dict(g.raw)
        rec["target"] = p.target
        pred_records.append(rec)
    ev = evaluate_promptcblue(gold_records, pred_records, on_parse_error="skip")
    out = ev.to_json()
    metrics = {"score": out["score"]} if out["score"] is not None else {}
    metrics.update({f"task:{t}": v for t, v in out["tasks"].items() if v is not None})
    clean = out["clean"]
    notes = [("official PromptCBLUE post-processor and scorer (0-100); lines the official parser "
             "would crash on are skipped and counted as parse failures")]
    if out["score"] is None:
        notes.append("the official overall score needs all 18 tasks; per-task scores are given")
    headline = "score" if "score" in metrics else next(iter(metrics), "score")
    per_label = {t: {"score": v} for t, v in out["tasks"].items()}
    return Evaluation(task.name, headline, metrics, {}, per_label, notes, 100,
                      {"clean": clean, "parse_failures": out["parse_failures"],
                       "official": out["official"]}, llm_error_rows(gold, pred))


EVALUATORS: dict[str, Callable[..., Evaluation]] = {"promptcblue": _promptcblue_path}


def evaluate(task: TaskSpec, gold: list[Example], pred: list[Example], *, schemas: Iterable | None = None,
             icd_terms: Iterable | None = None, n_boot: int = 1000, seed: int = 0) -> Evaluation:
    """Score aligned ``gold``/``pred`` (same length and order) for ``task``."""
    if len(gold) != len(pred):
        raise ValueError(f"gold and predictions are not aligned: {len(gold)} vs {len(pred)}")
    from ..metrics.bootstrap import check_resamples

    n_boot = check_resamples(n_boot)      # before any scoring: a huge count would never end
    path = EVALUATORS.get(task.scorer, _registry_path)
    return path(task, gold, pred, schemas=schemas, icd_terms=icd_terms, n_boot=n_boot, seed=seed)


def error_row(row: ErrorRow) -> dict[str, Any]:
    """A taxonomy :class:`~cblue_core.analysis.taxonomy.ErrorRow` as an errors-table row."""
    out: dict[str, Any] = {"idx": row.example, "turn": row.turn, "category": row.category,
                           "tags": list(row.tags)}
    for side, item in (("gold", row.gold), ("pred", row.pred)):
        if isinstance(item, Span):
            out.update({f"{side}_label": item.type, f"{side}_start": item.start,
                        f"{side}_end": item.end, f"{side}_text": item.text})
        elif isinstance(item, Triple):
            out.update({f"{side}_label": item.predicate,
                        f"{side}_text": f"{item.subject} → {item.object}"})
        elif item is not None:              # a CDN term or a label
            out.update({f"{side}_label": item, f"{side}_text": item})
    return out
