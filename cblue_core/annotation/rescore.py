"""Re-scoring a run against any gold version, and which errors a correction removes or adds.

Scoring goes through :func:`cblue_core.runs.evaluation.evaluate`, exactly as a run is scored when it
is made; only the gold differs.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..records import Example
from ..runs.evaluation import Evaluation, evaluate
from ..tasks import get_task

CORRECT = ("correct", "correct_term")


@dataclass(frozen=True)
class ErrorChanges:
    """Errors of a run on ``base`` gold that disappear on ``version`` gold (``fixed``) and
    those that appear (``new``); ``delta``: headline on ``version`` minus headline on ``base``."""

    fixed: list[dict]
    new: list[dict]
    delta: float | None
    headline: str = ""
    before: float | None = None     # headline on the base gold
    after: float | None = None      # headline on the version's gold
    version: str | None = None
    base: str | None = "original"
    examples: tuple[int, ...] = ()  # examples whose error rows changed
    evaluation_before: Evaluation | None = field(default=None, repr=False, compare=False)
    evaluation_after: Evaluation | None = field(default=None, repr=False, compare=False)


def _aligned_predictions(gold: list[Example], preds: list[Example]) -> list[Example]:
    by_idx = {p.index: p for p in preds}
    return [by_idx.get(g.index) or Example(key=g.key, index=g.index, text=g.text, text2=g.text2)
            for g in gold]


def rescore_run(ws, run_id: int, version: str | None, *, n_boot: int = 0, seed: int = 0) -> Evaluation:
    """Score a stored run against the gold at ``version`` (None = current, "original", a name)."""
    from ..runs.record import reference_lists  # here: cblue_core.runs imports the store

    run = ws.runs.get(run_id)
    if run is None:
        raise ValueError(f"no run {run_id} in the workspace")
    task = get_task(run.task)
    gold = ws.annotations.gold_examples(run.dataset_id, version)
    pred = _aligned_predictions(gold, ws.runs.predictions(run_id))
    return evaluate(task, gold, pred, n_boot=n_boot, seed=seed, **reference_lists(ws, task.name))


def _row_key(row: dict) -> tuple:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(row.items()))


def _errors(ev: Evaluation) -> Counter:
    return Counter(_row_key(r) for r in ev.error_rows if r.get("category") not in CORRECT)


def error_changes(ws, run_id: int, version: str | None, *, base: str | None = "original") -> ErrorChanges:
    """The run's errors on ``base`` gold (default: as ingested, what the run was scored on)
    against its errors on ``version`` gold."""
    ev_base = rescore_run(ws, run_id, base)
    ev_new = rescore_run(ws, run_id, version)
    eb, en = _errors(ev_base), _errors(ev_new)
    fixed = [dict(k) for k in (eb - en).elements()]
    new = [dict(k) for k in (en - eb).elements()]
    for rows in (fixed, new):
        for r in rows:
            if isinstance(r.get("tags"), tuple):
                r["tags"] = list(r["tags"])
        rows.sort(key=lambda r: (r.get("idx", -1), str(r.get("category")), str(r.get("gold_text")),
                                 str(r.get("pred_text"))))
    before, after = ev_base.value, ev_new.value
    delta = after - before if before is not None and after is not None else None
    changed = tuple(sorted({r["idx"] for r in fixed + new if r.get("idx") is not None}))
    return ErrorChanges(fixed, new, delta, ev_new.headline, before, after, version, base, changed,
                        ev_base, ev_new)
