"""Seen and unseen examples: which examples of a run its model was trained on, as a filter.

A model run stores its training set when it is recorded (:func:`cblue_core.runs.record.record_run`);
the migration to schema 4 settles runs whose metrics carried the overlap. A model run stored
before models declared training records is settled here at first need, from its model's folder
when that is still there, and stored (except in a read-only workspace). A run whose model
declares no training records (an imported file, a user checkpoint) has no seen set: its filter
is unknown, never guessed.

For two runs (Compare), "seen" is the union of both models' training records, so "unseen" is
what neither model saw: the only part on which both scores are honest.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models.provenance import read_training_records
from ..models.registry import ModelNotFoundError, resolve
from ..store.error_selection import Seen
from ..store.runs import RunInfo
from ..store.training_sets import TrainingSet, from_overlap
from ..store.workspace import Workspace
from ..tasks import get_task
from .record import reference_lists, training_overlap


@dataclass(frozen=True)
class SeenSplit:
    """What the seen/unseen filter means for one run or a pair: ``known`` only when every run's
    model declares its training records; ``runs`` and ``models`` define "seen" (their union)."""

    known: bool
    runs: tuple[int, ...]
    models: tuple[str, ...] = ()
    seen_examples: int = 0
    reason: str = ""          # why it is unknown

    def describe(self) -> str:
        """Whose training records define the split, for a caption."""
        if not self.known:
            return self.reason
        models = list(dict.fromkeys(self.models))
        who = " and ".join(models) if models else "the model"
        either = "either model's" if len(models) > 1 else "the model's"
        return (f"{self.seen_examples:,} examples in {either} training records ({who}); "
                "unseen: the rest")


def settle(ws: Workspace, run: RunInfo, extra_dirs: Sequence[str] = ()) -> TrainingSet | None:
    """The run's training set, settled first when it is not yet; None when it cannot be known
    now (a model run whose model folder is no longer found, or a read-only workspace: tried
    again next time)."""
    stored = ws.runs.training_sets([run.run_id]).get(run.run_id)
    if stored is not None:
        return stored
    if ws.read_only:      # the filter queries read the stored rows: nothing to filter on
        return None
    if run.source != "model" or not run.model:
        return _keep(ws, run, TrainingSet(False, run.model), [])
    try:
        folder = resolve(run.model, extra_dirs).path
    except ModelNotFoundError:
        return None
    records = read_training_records(folder)
    if records is None:
        return _keep(ws, run, TrainingSet(False, run.model), [])
    task = get_task(run.task)
    overlap = training_overlap(task, ws.datasets.examples(run.dataset_id), ws.runs.predictions(run.run_id),
                               records, **reference_lists(ws, task.name))
    return _keep(ws, run, *from_overlap(overlap, run.model))


def settle_all(ws: Workspace, runs: Sequence[RunInfo], extra_dirs: Sequence[str] = ()
               ) -> dict[int, TrainingSet | None]:
    """:func:`settle` for many runs (one query for those already settled)."""
    stored: dict[int, TrainingSet | None] = dict(ws.runs.training_sets([r.run_id for r in runs]))
    return {r.run_id: stored[r.run_id] if r.run_id in stored else settle(ws, r, extra_dirs) for r in runs}


def unseen_score(ts: TrainingSet | None) -> tuple[str, float | None, int] | None:
    """(headline, value, examples) on the examples the run's model never saw; None when that is
    unknown (no declared training records)."""
    if ts is None or not ts.declared:
        return None
    part = ts.unseen_metrics
    if part is None:          # every example was in the training records
        return "", None, 0
    name = str(part.get("headline", ""))
    value = part.get("metrics", {}).get(name)
    return name, None if value is None else float(value), int(part.get("examples", 0))


def _keep(ws: Workspace, run: RunInfo, ts: TrainingSet, seen: list[int]) -> TrainingSet:
    ws.runs.save_training_set(run.run_id, ts, seen)
    return ts


def seen_split(ws: Workspace, runs: Sequence[RunInfo], extra_dirs: Sequence[str] = ()) -> SeenSplit:
    """The seen/unseen split of one run, or of two runs compared (the union of their seen sets)."""
    ids = tuple(r.run_id for r in runs)
    models: list[str] = []
    for run in runs:
        ts = settle(ws, run, extra_dirs)
        if ts is None:
            why = ("the workspace is read-only, so they cannot be stored" if ws.read_only else
                   f"its model {run.model} is not found")
            return SeenSplit(False, ids, reason=f"unknown: run #{run.run_id}'s training records are not "
                                                f"settled and {why}")
        if not ts.declared:
            what = "an imported file" if run.source != "model" else f"model {run.model}"
            return SeenSplit(False, ids, reason=f"unknown: run #{run.run_id} is {what}, which declares "
                                                "no training records")
        models.append(ts.model or run.model or "the model")
    return SeenSplit(True, ids, tuple(models), len(ws.runs.seen_indices(ids)))


def part_indices(ws: Workspace, dataset_id: int, seen_runs: Sequence[int], seen: Seen) -> list[int]:
    """The record numbers of a split's seen or unseen part, as the settled training sets of
    ``seen_runs`` define it (their union; check :func:`seen_split` is known first)."""
    inside = set(ws.runs.seen_indices(seen_runs))
    return sorted(inside) if seen == "seen" else [i for i in ws.datasets.indices(dataset_id) if i not in inside]


def seen_set(ws: Workspace, run_id: int) -> frozenset[int] | None:
    """The run's examples in its model's training records, as stored with the run; None when its
    model declares none (or they are not settled yet)."""
    ts = ws.runs.training_sets([run_id]).get(run_id)
    return frozenset(ws.runs.seen_indices([run_id])) if ts is not None and ts.declared else None
