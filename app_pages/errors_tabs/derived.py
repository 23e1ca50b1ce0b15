"""What the Errors page derives from a run: the run's per-example statistics, its buckets, its
confusion-matrix figure and its slice scores (its scores on corrected gold: :mod:`app_pages.rescoring`).

Runs never change once stored: the buckets and the per-example statistics are computed once per
run and kept in the workspace (:mod:`cblue_core.runs.derived`), so a restarted server reads them
instead of deriving them again; ``st.cache_data`` then keeps them per process, keyed by the
workspace file and the run id. It returns copies, so what is cached here is small: bucket and
slice rows, error-change summaries.
"""
from __future__ import annotations

import streamlit as st

from app_pages.bucket_chart import bucket_html
from app_pages.common import run_evaluation_cached, session_cursor, shared_workspace
from app_pages.confusion_chart import confusion_grid
from app_pages.confusion_html import MatrixView, matrix_view
from cblue_core.analysis.buckets import BucketScore
from cblue_core.analysis.slices import SliceScore, slice_scores
from cblue_core.runs.derived import run_buckets_kept
from cblue_core.runs.seen_split import part_indices
from cblue_core.store.error_selection import Seen
from cblue_core.store.slices import SliceError
from cblue_core.tasks import get_task


def compute_buckets(path: str, run_id: int, seen: Seen | None = None) -> list[BucketScore]:
    """The run's buckets as kept in the workspace (computed and kept the first time); ``seen``:
    only the examples in (or out of) the run's training records."""
    return run_buckets_kept(shared_workspace(path).cursor(), run_id, seen)


@st.cache_data(max_entries=32, show_spinner="Bucketing the run…")
def buckets(path: str, run_id: int, seen: Seen | None = None) -> tuple[list[BucketScore], bool]:
    """(bucket scores, whether a train split gave the training-set features)."""
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    has_train = run is not None and ws.datasets.find(run.task, "train") is not None
    return compute_buckets(path, run_id, seen), has_train


@st.cache_data(max_entries=32, show_spinner=False)
def bucket_chart(path: str, run_id: int, metric: str, seen: Seen | None = None) -> str:
    """The bucket panels as HTML (:mod:`app_pages.bucket_chart`)."""
    return bucket_html(buckets(path, run_id, seen)[0], metric=metric)


@st.cache_data(max_entries=32, show_spinner=False)
def confusion_chart(path: str, run_id: int, seen: Seen | None, normalize: str | None,
                    top_k: int | None) -> MatrixView | None:
    """The run's confusion matrix, labels in the task's registry order (related labels together),
    with its HTML: built once per view (a click only moves the ring). None when the run has no
    confusion pairs (or no longer exists)."""
    ws = shared_workspace(path).cursor()
    run = ws.runs.get(run_id)
    cm = None if run is None else ws.runs.confusion(run_id, seen=seen)
    if run is None or cm is None or cm.empty:
        return None
    task = get_task(run.task)
    present = set(cm["gold_label"]) | set(cm["pred_label"])
    registry_order = [code for code in task.label_codes if code in present]
    return matrix_view(confusion_grid(cm, labels=registry_order, normalize=normalize, top_k=top_k,
                                      label_text=task.display_label))


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
    evaluation = run_evaluation_cached(path, run_id)
    if evaluation is None:
        return []
    return slice_scores(evaluation, slices, indices)


@st.cache_data(max_entries=64, show_spinner="Scoring the slices…")
def slice_table(path: str, run_id: int, slices: tuple[tuple[str, str], ...],
                seen: Seen | None = None) -> list[SliceScore]:
    return compute_slices(path, run_id, slices, seen)
