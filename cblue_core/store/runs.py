"""Runs, their predictions and their error rows.

A run is a set of predictions for one stored split, from an imported file or a model, with
its metrics. Model runs and imported runs are stored the same way.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..records import Example, Span, example_from_dict
from . import training_sets
from .access import Access, writes, writes_for_system
from .confusion import Side, confusion_counts
from .database import Database
from .error_selection import ErrorRows, ErrorSelection, Seen
from .training_sets import TrainingSet

if TYPE_CHECKING:
    import pandas as pd

ERROR_COLUMNS = ("idx", "turn", "category", "tags", "gold_label", "pred_label", "gold_start",
                 "gold_end", "pred_start", "pred_end", "gold_text", "pred_text")
# A total order: pages map a clicked table row back by position, and Streamlit keys a chart's
# selection on its spec, so the same query must list the same rows in the same order every rerun.
ERROR_ROW_ORDER = ("idx, turn NULLS FIRST, coalesce(gold_start, pred_start) NULLS LAST, gold_start NULLS LAST,"
                   " gold_end NULLS LAST, pred_start NULLS LAST, pred_end NULLS LAST, category,"
                   " gold_label NULLS FIRST, pred_label NULLS FIRST, gold_text NULLS FIRST, pred_text NULLS FIRST,"
                   " tags NULLS FIRST")
_ERROR_TYPES = {"idx": pa.int32(), "turn": pa.int32(), "tags": pa.list_(pa.string()),
                "gold_start": pa.int32(), "gold_end": pa.int32(), "pred_start": pa.int32(),
                "pred_end": pa.int32()}


@dataclass(frozen=True)
class RunInfo:
    run_id: int
    dataset_id: int
    task: str
    split: str
    name: str
    source: str
    model: str | None
    params: dict[str, Any]
    device: str | None
    created_at: str
    metrics: dict[str, Any] = field(default_factory=dict)
    created_by: str | None = None      # unknown for runs stored before schema 9

    @property
    def headline(self) -> tuple[str, float | None]:
        name = str(self.metrics.get("headline", ""))
        value = self.metrics.get("metrics", {}).get(name)
        return name, None if value is None else float(value)


def _labels(side: Side) -> str | tuple[str, ...] | None:
    return side if side is None or isinstance(side, str) else tuple(side)


def error_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """Error rows (dicts with ERROR_COLUMNS keys, missing ones null) as an Arrow table."""
    cols: dict[str, list[Any]] = {c: [] for c in ERROR_COLUMNS}
    for r in rows:
        for c in ERROR_COLUMNS:
            cols[c].append(r.get(c))
    return pa.table({c: pa.array(v, type=_ERROR_TYPES.get(c, pa.string())) for c, v in cols.items()})


class RunStore:
    READS = ("all", "get", "predictions", "prediction", "training_sets", "seen_indices", "error_counts",
             "tag_counts", "confusion", "select_errors", "error_rows", "error_marks", "example_error_counts")

    def __init__(self, db: Database, access: Access | None = None) -> None:
        self.db = db
        self.access = access or Access()

    @writes("run.create", target=lambda a: f"dataset {a.get('dataset_id')}",
            detail=lambda a: f"run {a.get('name')!r} ({a.get('source')})")
    def create(self, dataset_id: int, name: str, *, source: str, predictions: list[Example],
               metrics: dict[str, Any], errors: pa.Table | None = None, model: str | None = None,
               params: dict[str, Any] | None = None, device: str | None = None,
               training: TrainingSet | None = None, seen: Iterable[int] = ()) -> int:
        """Store a run, its predictions, its error rows and (for a model run) its training set
        with the ``seen`` record numbers, in one transaction."""
        dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode
        pred_rows = pa.table({
            "idx": pa.array([p.index for p in predictions], pa.int32()),
            "record": pa.array([dumps(p.to_dict(include_raw=False)) for p in predictions], pa.string()),
            "raw": pa.array([None if p.raw is None else dumps(p.raw) for p in predictions], pa.string()),
        })
        with self.db.transaction():
            run_id = int(self.db.scalar(
                "INSERT INTO runs (dataset_id, name, source, model, params, device, metrics, created_by)"
                " VALUES (?,?,?,?,?,?,?,?) RETURNING run_id",
                [dataset_id, name, source, model, dumps(params or {}), device, dumps(metrics),
                 self.access.actor.name if self.access.actor else None]))
            self.db.insert_arrow("predictions", pred_rows, prefix_sql="? AS run_id,", params=[run_id])
            if errors is not None:
                self.db.insert_arrow("errors", errors, prefix_sql="? AS run_id,", params=[run_id])
            if training is not None:
                training_sets.save(self.db, run_id, training, seen)
        return run_id

    def all(self, dataset_id: int | None = None, task: str | None = None) -> list[RunInfo]:
        sql = ("SELECT r.run_id, r.dataset_id, d.task, d.split, r.name, r.source, r.model, r.params,"
               " r.device, strftime(r.created_at, '%Y-%m-%d %H:%M:%S'), r.metrics, r.created_by FROM runs r"
               " JOIN datasets d USING (dataset_id) WHERE 1=1")
        params: list[Any] = []
        if dataset_id is not None:
            sql += " AND r.dataset_id = ?"
            params.append(dataset_id)
        if task:
            sql += " AND d.task = ?"
            params.append(task)
        rows = self.db.execute(sql + " ORDER BY r.run_id", params).fetchall()
        return [RunInfo(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7] or "{}"), r[8], r[9],
                        json.loads(r[10] or "{}"), r[11]) for r in rows]

    def get(self, run_id: int) -> RunInfo | None:
        return next((r for r in self.all() if r.run_id == run_id), None)

    def predictions(self, run_id: int) -> list[Example]:
        rows = self.db.execute("SELECT record, raw FROM predictions WHERE run_id=? ORDER BY idx",
                                [run_id]).fetchall()
        out = []
        for rec, raw in rows:
            ex = example_from_dict(json.loads(rec))
            ex.raw = json.loads(raw) if raw is not None else None
            out.append(ex)
        return out

    def prediction(self, run_id: int, idx: int) -> Example | None:
        row = self.db.execute("SELECT record, raw FROM predictions WHERE run_id=? AND idx=?",
                               [run_id, idx]).fetchone()
        if not row:
            return None
        ex = example_from_dict(json.loads(row[0]))
        ex.raw = json.loads(row[1]) if row[1] is not None else None
        return ex

    @writes("run.delete", target=lambda a: f"run {a.get('run_id')}")
    def delete(self, run_id: int) -> None:
        with self.db.transaction():
            training_sets.delete(self.db, run_id)
            for table in ("run_derived", "errors", "predictions", "runs"):
                self.db.execute(f"DELETE FROM {table} WHERE run_id=?", [run_id])

    # ------------------------------------------------------------------ training sets (seen/unseen)
    def training_sets(self, run_ids: Iterable[int] | None = None) -> dict[int, TrainingSet]:
        """The settled training sets of these runs (all runs' when None); a run missing from
        the answer is not settled yet (see :mod:`cblue_core.runs.seen_split`)."""
        return training_sets.load(self.db, run_ids)

    @writes_for_system("run.training_set")
    def save_training_set(self, run_id: int, training: TrainingSet, seen: Iterable[int] = ()) -> None:
        with self.db.transaction():
            training_sets.save(self.db, run_id, training, seen)

    def seen_indices(self, run_ids: Iterable[int]) -> list[int]:
        """Record numbers in the training records of any of these runs' models."""
        return training_sets.seen_indices(self.db, run_ids)

    # ------------------------------------------------------------------ error analysis queries
    def error_counts(self, run_id: int, *, seen: Seen | None = None) -> dict[str, int]:
        where, params = ErrorSelection(seen=seen).where(run_id)
        return dict(self.db.execute(
            f"SELECT category, count(*) FROM errors WHERE {where} GROUP BY 1 ORDER BY 2 DESC, 1",
            params).fetchall())

    def tag_counts(self, run_id: int, *, seen: Seen | None = None) -> dict[str, int]:
        where, params = ErrorSelection(seen=seen).where(run_id)
        return dict(self.db.execute(
            f"SELECT tag, count(*) FROM (SELECT unnest(tags) AS tag FROM errors WHERE {where})"
            " GROUP BY 1 ORDER BY 2 DESC, 1", params).fetchall())

    def confusion(self, run_id: int, *, seen: Seen | None = None) -> pd.DataFrame:
        """(gold_label, pred_label, n) over every error row, ∅ for a missing side: label
        confusions for classification, entity types of spans, predicates of triples. The diagonal
        holds the true positives (see :mod:`cblue_core.store.confusion` for how rows pair).
        ``seen``: only the examples in or out of the run's training records."""
        return confusion_counts(self.db, run_id, ErrorSelection(seen=seen).where(run_id))

    def select_errors(self, run_id: int, selection: ErrorSelection | None = None, *,
                      limit: int | None = 500) -> ErrorRows:
        """The error rows a selection (None: every row) holds: the first ``limit`` (all when
        None) in a stable order, with ``total_rows`` and ``examples`` counted over the whole
        selection."""
        where, params = (selection or ErrorSelection()).where(run_id)
        total, examples = self.db.execute(
            f"SELECT count(*), count(DISTINCT idx) FROM errors WHERE {where}", params).fetchone() or (0, 0)
        cut = "" if limit is None else f" LIMIT {max(int(limit), 0)}"
        rows = self.db.execute(f"SELECT {', '.join(ERROR_COLUMNS)} FROM errors WHERE {where}"
                               f" ORDER BY {ERROR_ROW_ORDER}{cut}", params).df()
        return ErrorRows(rows, int(total), int(examples), limit)

    def error_rows(self, run_id: int, *, category: str | None = None, gold_label: Side = None,
                   pred_label: Side = None, tag: str | None = None, idx: int | None = None,
                   limit: int = 500) -> pd.DataFrame:
        """Error rows behind a chart cell, row or column (labels as the confusion matrix counts
        them: ∅, a label, or the labels of a merged "other"); None means any (the first ``limit``:
        :meth:`select_errors` also counts the whole selection)."""
        selection = ErrorSelection(category=category, gold_label=_labels(gold_label),
                                   pred_label=_labels(pred_label), tag=tag, idx=idx)
        return self.select_errors(run_id, selection, limit=limit).rows

    def error_marks(self, run_id: int, idx: int) -> tuple[dict[Span, str], dict[Span, str]]:
        """One example's error categories on its spans: (gold spans, predicted spans), for the
        renderer's marks."""
        gold: dict[Span, str] = {}
        pred: dict[Span, str] = {}
        for g_start, g_end, g_label, g_text, p_start, p_end, p_label, p_text, category in self.db.rows(
                "SELECT gold_start, gold_end, gold_label, gold_text, pred_start, pred_end, pred_label,"
                f" pred_text, category FROM errors WHERE run_id=? AND idx=? ORDER BY {ERROR_ROW_ORDER}",
                [run_id, idx]):
            if g_start is not None:
                gold[Span(int(g_start), int(g_end), str(g_label), str(g_text))] = str(category)
            if p_start is not None:
                pred[Span(int(p_start), int(p_end), str(p_label), str(p_text))] = str(category)
        return gold, pred

    def example_error_counts(self, run_id: int) -> dict[int, dict[str, int]]:
        """A run's error rows per example and category (the stored taxonomy rows)."""
        out: dict[int, dict[str, int]] = {}
        for idx, cat, n in self.db.execute(
                "SELECT idx, category, count(*) FROM errors WHERE run_id=? GROUP BY ALL ORDER BY 1, 2",
                [run_id]).fetchall():
            out.setdefault(idx, {})[cat] = n
        return out
