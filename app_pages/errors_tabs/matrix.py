"""The confusion matrix (labels, entity types, or predicates of triples) as clickable squares with
a ∅ row and column and Σ totals; every label whole, the figure as large as the labels need, in a
box that scrolls sideways; a top-k control merges the rarer labels into "other"."""
from __future__ import annotations

import streamlit as st

from app_pages.common import db_path, md, selected
from app_pages.confusion_chart import NONE, outline
from app_pages.errors_tabs import derived
from app_pages.errors_tabs.state import FILTER_KEY, seen_filter, select_filter
from app_pages.keys import Errors as K
from app_pages.wide_chart import wide_plotly_chart

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
    cm = ws.runs.confusion(run.run_id, seen=seen_filter())
    if cm.empty:
        st.info("No confusion pairs for this run (no gold or predicted item).")
        return
    n_labels = len((set(cm["gold_label"]) | set(cm["pred_label"])) - {NONE})
    c1, c2 = st.columns([1, 2])
    normalise = c1.toggle("Normalise each row (share of the gold label)", key=K.NORMALISE)
    top_k = ALL_LABELS
    if n_labels > FEW_LABELS:
        top_k = c2.radio(f"Labels shown (of {n_labels:d}); the rest merged into one “other” row and column",
                         TOP_K, horizontal=True, key=K.TOP_K,
                         format_func=lambda k: md(k) if k == ALL_LABELS else f"top {int(k):d}",
                         help="The most frequent labels, counting gold and predicted items.")

    # Built once per view and cached, without an outline: the click that started this rerun is
    # already in the widget's state, and the cell it picked (read from this figure) is outlined
    # now rather than one click later, without building the matrix again.
    cf = derived.confusion_chart(db_path(), run.run_id, seen_filter(), "row" if normalise else None,
                                 None if top_k == ALL_LABELS else int(top_k))
    if cf is None:
        st.info("No confusion pairs for this run (no gold or predicted item).")
        return
    flt = st.session_state.get(FILTER_KEY) or {}
    points = selected(st.session_state.get(K.MATRIX), "points")
    pick = cf.pick(points[0]) if points else None
    if pick is not None and pick.filter() != _cell_filter(flt):
        select_filter(pick.filter())
        flt = pick.filter()
    # Streamlit keeps a chart whose figure did not change as the browser drew it, with the ring
    # Plotly put on the clicked cell: after a click on this chart the figure is sent as before
    # (a changed one would be a new element, redrawn whole). A cell chosen anywhere else (another
    # tab, a link, no click yet) is marked in the figure.
    if pick is None or pick.filter() != _cell_filter(flt):
        st.session_state[K.MATRIX_MARK] = _chosen(flt)
    cf = outline(cf, st.session_state.get(K.MATRIX_MARK))
    st.caption("Click a cell for its examples; the Σ row and column select a whole gold row or "
               "predicted column; a black ring marks the cell listed. Green borders: the diagonal. "
               "Scroll sideways for more columns. " + PAIRING)
    wide_plotly_chart(cf.figure, width=cf.width, key=K.MATRIX, box_key=K.MATRIX_BOX, on_select="rerun",
                      selection_mode="points")
