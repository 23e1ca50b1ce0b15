"""Which examples of a run were in its model's training records: the run's "seen" part, stored
as rows so that every error query can keep only the seen or the unseen examples.

A run whose training set is settled has one ``run_training_sets`` row: ``declared`` is False
when its model declares no training records (an imported file, a user checkpoint), so that the
split is unknown; otherwise ``run_seen_examples`` holds its seen record numbers and
``unseen_metrics`` its score on the rest. A run without a row is not settled yet (stored before
schema 4 by a model that did not record its overlap): :mod:`cblue_core.runs.seen_split` settles it.
The tables are declared in :mod:`cblue_core.store.schema`; they belong to the run store (:class:`cblue_core.store.runs.RunStore`), which calls
the functions here.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .database import Database

TRAINING_SET_TABLES = ("run_training_sets", "run_seen_examples")


@dataclass(frozen=True)
class TrainingSet:
    """What a run knows of its model's training records (the record numbers themselves:
    :func:`seen_indices`)."""

    declared: bool
    model: str | None = None
    seen_examples: int = 0
    unseen_metrics: dict[str, Any] | None = field(default=None, compare=False)


def from_overlap(overlap: dict[str, Any] | None, model: str | None) -> tuple[TrainingSet, list[int]]:
    """A training set and its seen record numbers from a run's ``training_overlap`` summary
    (:func:`cblue_core.runs.record.training_overlap`; None: the model declares nothing)."""
    if overlap is None:
        return TrainingSet(False, model), []
    seen = sorted({int(i) for i in overlap.get("indices", [])})
    return TrainingSet(True, model, len(seen), overlap.get("metrics_without_overlap")), seen


def save(db: Database, run_id: int, ts: TrainingSet, seen: Iterable[int] = ()) -> None:
    """Store (or replace) a run's training set and its seen record numbers; the caller holds
    the transaction when it must go with other writes."""
    delete(db, run_id)
    indices = sorted({int(i) for i in seen})
    metrics = None if ts.unseen_metrics is None else json.dumps(ts.unseen_metrics, ensure_ascii=False)
    db.execute("INSERT INTO run_training_sets VALUES (?, ?, ?, ?, ?)",
               [run_id, ts.declared, ts.model, len(indices) if ts.declared else None, metrics])
    if indices:
        db.insert_arrow("run_seen_examples", pa.table({"idx": pa.array(indices, pa.int32())}),
                        prefix_sql="? AS run_id,", params=[run_id])


def delete(db: Database, run_id: int) -> None:
    for table in TRAINING_SET_TABLES:
        db.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])


def load(db: Database, run_ids: Iterable[int] | None = None) -> dict[int, TrainingSet]:
    """The settled training sets of ``run_ids`` (every run's when None)."""
    sql = "SELECT run_id, declared, model, seen_examples, unseen_metrics FROM run_training_sets"
    params: list[Any] = []
    if run_ids is not None:
        sql += " WHERE run_id IN (SELECT unnest(?::INTEGER[]))"
        params.append(list(run_ids))
    return {int(run_id): TrainingSet(bool(declared), model, int(n or 0),
                                     None if metrics is None else json.loads(metrics))
            for run_id, declared, model, n, metrics in db.rows(sql + " ORDER BY run_id", params)}


def seen_indices(db: Database, run_ids: Iterable[int]) -> list[int]:
    """The record numbers in the training records of any of these runs' models (their union)."""
    return [int(r[0]) for r in db.rows(
        "SELECT DISTINCT idx FROM run_seen_examples WHERE run_id IN (SELECT unnest(?::INTEGER[]))"
        " ORDER BY idx", [list(run_ids)])]


def backfill_from_metrics(db: Database) -> None:
    """Settle the runs whose metrics already carry ``training_overlap`` (model runs recorded
    it since the training records existed; null when the model declared none), and imported
    runs (no model, so no known training records). Used by the migration to schema 4."""
    for run_id, source, model, metrics in db.rows("SELECT run_id, source, model, metrics FROM runs"):
        summary = json.loads(metrics or "{}")
        if "training_overlap" in summary:
            save(db, int(run_id), *from_overlap(summary["training_overlap"], model))
        elif source != "model":
            save(db, int(run_id), TrainingSet(False, model))
