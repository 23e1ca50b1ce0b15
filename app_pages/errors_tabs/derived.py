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
from cblue_core.store.slices import SliceError
from cblue_core.tasks import get_task


def compute_buckets(path: str, run_id: int) -> list[BucketScore]:
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    if run is None:
        return []
    task, gold = get_task(run.task), ws.datasets.examples(run.dataset_id)
    if bucket_kind(task, gold) is None:     # e.g. CMeIE triples: no predictions, no train split read
        return []
    train_info = ws.datasets.find(run.task, "train")
    train = ws.datasets.examples(train_info.dataset_id) if train_info else None
    return run_buckets(task, gold, ws.runs.predictions(run_id), train)


@st.cache_data(max_entries=32, show_spinner="Bucketing the run…")
def buckets(path: str, run_id: int) -> tuple[list[BucketScore], bool]:
    """(bucket scores, whether a train split gave the training-set features)."""
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    has_train = run is not None and ws.datasets.find(run.task, "train") is not None
    return compute_buckets(path, run_id), has_train


@st.cache_data(max_entries=32, show_spinner=False)
def bucket_chart(path: str, run_id: int, metric: str) -> dict[str, Any]:
    """The bucket figure as Plotly's dict: building it takes 0.1 s of Plotly's validation."""
    return bucket_figure(buckets(path, run_id)[0], metric=metric).to_dict()


def compute_slices(path: str, run_id: int, slices: tuple[tuple[str, str], ...]) -> list[SliceScore]:
    ws = session_cursor(path)
    run = ws.runs.get(run_id)
    if run is None:
        return []
    indices: dict[str, list[int] | str] = {}
    for name, predicate in slices:
        try:
            indices[name] = ws.slices.indices(run.dataset_id, predicate)
        except SliceError as exc:
            indices[name] = str(exc)
    return slice_scores(run_evaluation_cached(path, run_id), slices, indices)


@st.cache_data(max_entries=64, show_spinner="Scoring the slices…")
def slice_table(path: str, run_id: int, slices: tuple[tuple[str, str], ...]) -> list[SliceScore]:
    return compute_slices(path, run_id, slices)
