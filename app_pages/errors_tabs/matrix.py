"""The confusion matrix (labels, entity types, or predicates of triples) as a grid of clickable
squares with a ∅ row and column and Σ totals; every label whole, the grid as large as the labels
need, in a box that scrolls sideways; a top-k control merges the rarer labels into "other"."""
from __future__ import annotations

import streamlit as st

from app_pages.common import db_path, md
from app_pages.components.cell_grid import cell_grid, picked_value
from app_pages.confusion_chart import NONE
from app_pages.errors_tabs import derived
from app_pages.errors_tabs.state import FILTER_KEY, seen_filter, select_filter
from app_pages.keys import Errors as K

ALL_LABELS = "all"
TOP_K = (ALL_LABELS, 10, 20, 30)
FEW_LABELS = 10          # up to this many labels there is nothing to merge

PAIRING = (
    "**How items pair into cells.** The diagonal holds exact matches only: each label's true "
    "positives (tp in Per label). Off the diagonal: a gold and a predicted item the taxonomy paired "
    "(same or overlapping span, same arguments) with different labels. ∅ column: gold items with no "
    "match (missed); ∅ row: predictions with no match (spurious). A pair with the right label but "
    "other boundaries or arguments is no match: it counts as one missed and one spurious. Rows sum "
    "to each label's gold items, columns to its predictions (Σ).")


def _cell_filter(flt: dict) -> dict:
    return {k: v for k, v in flt.items() if k in ("gold_label", "pred_label")}


def _chosen(flt: dict) -> tuple | None:
    if not {"gold_label", "pred_label"} & set(flt):
        return None
    return flt.get("gold_label"), flt.get("pred_label")


def render(ws, run) -> None:
    c1, c2 = st.columns([1, 2])
    normalise = c1.toggle("Normalise each row (share of the gold label)", key=K.NORMALISE)
    # Built once per view and cached: a click only moves the ring.
    view = whole = derived.confusion_chart(db_path(), run.run_id, seen_filter(), "row" if normalise else None, None)
    if whole is None:
        st.info("No confusion pairs for this run (no gold or predicted item).")
        return
    n_labels = len(set(whole.grid.positions) - {NONE})
    if n_labels > FEW_LABELS:
        top_k = c2.radio(f"Labels shown (of {n_labels:d}); the rest merged into one “other” row and column",
                         TOP_K, horizontal=True, key=K.TOP_K,
                         format_func=lambda k: md(k) if k == ALL_LABELS else f"top {int(k):d}",
                         help="The most frequent labels, counting gold and predicted items.")
        if top_k != ALL_LABELS:
            view = derived.confusion_chart(db_path(), run.run_id, seen_filter(), "row" if normalise else None,
                                           int(top_k)) or whole
    flt = st.session_state.get(FILTER_KEY) or {}
    # The click that started this run is read before the grid is drawn, so that the grid rings
    # the cell whose rows are listed in this same run.
    pick = view.grid.pick(picked_value(K.matrix(view.version)))
    if pick is not None and pick.filter() != _cell_filter(flt):
        select_filter(pick.filter())
        flt = pick.filter()
    st.caption("Click a cell for its examples; the Σ row and column select a whole gold row or "
               "predicted column; a black ring marks the cell listed. Green borders: the diagonal. "
               "Hover a cell or a label for its names; scroll sideways for more columns. " + PAIRING)
    cell_grid(view.html, view.version, view.grid.selected_key(_chosen(flt)), key=K.matrix(view.version))
