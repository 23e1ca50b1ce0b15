"""What the Errors page derives from a run, computed once and cached: the run's per-example
statistics, its buckets and its slice scores (its scores on corrected gold: :mod:`app_pages.rescoring`).

Runs never change once stored, so a run's derived data is keyed by the workspace file and the
run id. ``st.cache_data`` returns
copies, so what is cached here is small: bucket and slice rows, error-change summaries.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.charts import bucket_figure
from app_pages.common import run_evaluation_cached, session_cursor, shared_workspace
from cblue_core.analysis.buckets import BucketScore, bucket_kind, run_buckets
from cblue_core.analysis.slices import SliceScore, slice_scores
from cblue_core.seen_split import part_indices
from cblue_core.store.error_selection import Seen
from cblue_core.store.slices import SliceError
from cblue_core.tasks import get_task


def compute_buckets(path: str, run_id: int, seen: Seen | None = None) -> list[BucketScore]:
    """``seen``: only the examples in (or out of) the run's training records."""
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    if run is None:
        return []
    task, gold = get_task(run.task), ws.datasets.examples(run.dataset_id)
    if bucket_kind(task, gold) is None:     # e.g. CHIP-CDN terms: no predictions, no train split read
        return []
    train_info = ws.datasets.find(run.task, "train")
    train = ws.datasets.examples(train_info.dataset_id) if train_info else None
    pred = ws.runs.predictions(run_id)
    seen_set = run_seen_set(ws, run_id)
    if seen is not None:
        keep = set(part_indices(ws, run.dataset_id, (run_id,), seen))
        gold, pred = [g for g in gold if g.index in keep], [p for p in pred if p.index in keep]
    return run_buckets(task, gold, pred, train, seen=seen_set)


def run_seen_set(ws, run_id: int) -> frozenset[int] | None:
    """The run's examples in its model's training records, as stored with the run; None when its
    model declares none (or they are not settled yet)."""
    ts = ws.runs.training_sets([run_id]).get(run_id)
    return frozenset(ws.runs.seen_indices([run_id])) if ts is not None and ts.declared else None


@st.cache_data(max_entries=32, show_spinner="Bucketing the run…")
def buckets(path: str, run_id: int, seen: Seen | None = None) -> tuple[list[BucketScore], bool]:
    """(bucket scores, whether a train split gave the training-set features)."""
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    has_train = run is not None and ws.datasets.find(run.task, "train") is not None
    return compute_buckets(path, run_id, seen), has_train


@st.cache_data(max_entries=32, show_spinner=False)
def bucket_chart(path: str, run_id: int, metric: str, seen: Seen | None = None) -> dict[str, Any]:
    """The bucket figure as Plotly's dict: building it takes 0.1 s of Plotly's validation."""
    return bucket_figure(buckets(path, run_id, seen)[0], metric=metric).to_dict()


def compute_slices(path: str, run_id: int, slices: tuple[tuple[str, str], ...],
                   seen: Seen | None = None) -> list[SliceScore]:
    """``seen``: each slice only on the examples in (or out of) the run's training records."""
    ws = session_cursor(path)
    run = ws.runs.get(run_id)
    if run is None:
        return []
    keep = None if seen is None else set(part_indices(ws, run.dataset_id, (run_id,), seen))
    indices: dict[str, list[int] | str] = {}
    for name, predicate in slices:
        try:
            found = ws.slices.indices(run.dataset_id, predicate)
        except SliceError as exc:
            indices[name] = str(exc)
        else:
            indices[name] = found if keep is None else [i for i in found if i in keep]
    return slice_scores(run_evaluation_cached(path, run_id), slices, indices)


@st.cache_data(max_entries=64, show_spinner="Scoring the slices…")
def slice_table(path: str, run_id: int, slices: tuple[tuple[str, str], ...],
                seen: Seen | None = None) -> list[SliceScore]:
    return compute_slices(path, run_id, slices, seen)
