"""What the Errors page's tabs share: the selection a click made (which error rows to list) and
the header's training-records filter, which every tab and the rows list respect."""
from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.common import db_path
from app_pages.keys import Errors as K
from app_pages.seen_filter import part_summary
from cblue_core.runs.seen_split import part_indices
from cblue_core.store.error_selection import ErrorSelection, Seen

FILTER_KEY = K.FILTER
EXAMPLE_KEY = K.EXAMPLE


def select_filter(new: dict[str, Any]) -> None:
    """A chart click: remember which error rows to list (and forget the example shown)."""
    if new != st.session_state.get(FILTER_KEY):
        st.session_state[FILTER_KEY] = new
        st.session_state.pop(EXAMPLE_KEY, None)


def seen_filter() -> Seen | None:
    """The header's "Training records" choice for the run shown (None: every example)."""
    return st.session_state.get(K.SEEN_ACTIVE)


def shown_summary(ws, run) -> dict[str, Any]:
    """The run's metrics on the examples the page shows: all of them, or the part the
    training-records filter keeps (with ``examples``). The unseen part's were stored with the run
    (runs stored since they carry per-label figures too); the seen part is re-scored once."""
    seen = seen_filter()
    if seen is None:
        return run.metrics
    if seen == "unseen":
        stored = ws.runs.training_sets([run.run_id]).get(run.run_id)
        if stored is not None and stored.unseen_metrics is not None and "per_label" in stored.unseen_metrics:
            return stored.unseen_metrics
    return part_summary(db_path(), run.run_id, seen, (run.run_id,))


def shown_indices(ws, run) -> set[int] | None:
    """The record numbers the training-records filter keeps (None: every example)."""
    seen = seen_filter()
    return None if seen is None else set(part_indices(ws, run.dataset_id, (run.run_id,), seen))


def selection_of(flt: dict[str, Any]) -> ErrorSelection:
    """A click's filter (``select_filter``) and the training-records filter as one selection. A
    slice (``idx_in``: its examples) lists their errors, not their correct items."""
    indices = flt.get("idx_in")
    return ErrorSelection(category=flt.get("category"), gold_label=flt.get("gold_label"),
                          pred_label=flt.get("pred_label"), tag=flt.get("tag"),
                          indices=None if indices is None else tuple(int(i) for i in indices),
                          errors_only=indices is not None, seen=seen_filter())


def metric_spec(run) -> str:
    return ".4f" if run.metrics.get("scale", 1) == 1 else ".2f"
