"""The error rows behind whatever was clicked, and one example with gold and prediction."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import url_state
from app_pages.common import counted, md, selected
from app_pages.errors_tabs.state import EXAMPLE_KEY, FILTER_KEY
from app_pages.html_view import show_html
from app_pages.keys import Errors as K
from app_pages.keys import Param
from cblue_core.records import Span
from cblue_core.render.example import comparison_html
from cblue_core.tasks import get_task

CORRECT = ("correct", "correct_term")


# A fragment: a row click reruns only this part, so the browser does not redraw the chart of the
# open tab above (the 44-label confusion matrix took 0.4 s of drawing per row click).
@st.fragment
def render(ws, run) -> None:
    st.subheader("Examples behind the selection")
    flt = dict(st.session_state.get(FILTER_KEY) or {})
    if not flt:
        st.caption("Click a confusion-matrix cell, a taxonomy bar, a tag or a slice.")
    else:
        shown_filter = {k: v for k, v in flt.items() if k != "idx_in"}
        st.caption("Filter: " + ", ".join(f"{md(k)} = {md(v)}" for k, v in shown_filter.items()))
        idx_in = flt.pop("idx_in", None)
        flt.pop("slice", None)
        rows = ws.runs.error_rows(run.run_id, limit=2000, **flt)
        if idx_in is not None:
            rows = rows[rows["idx"].isin(idx_in) & (~rows["category"].isin(CORRECT))]
        shown = int(rows["idx"].nunique()) if len(rows) else 0
        st.caption(f"{counted(len(rows), 'row')} in {counted(shown, 'example')}")
        view = rows[["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]]
        event = st.dataframe(view, hide_index=True, width="stretch", on_select="rerun",
                             selection_mode="single-row", key=K.ROWS)
        picked = selected(event)
        if picked:
            st.session_state[EXAMPLE_KEY] = int(view.iloc[picked[0]]["idx"])
    url_state.seed(EXAMPLE_KEY, Param.EXAMPLE, url_state.int_in())
    idx = st.session_state.get(EXAMPLE_KEY)
    if idx is None:
        return
    gold = ws.datasets.example(run.dataset_id, idx)
    pred = ws.runs.prediction(run.run_id, idx)
    if gold is None or pred is None:
        return
    url_state.show({Param.EXAMPLE: idx})
    marks = {}
    for r in ws.runs.error_rows(run.run_id, idx=idx).itertuples(index=False):
        if pd.notna(r.gold_start):
            marks[Span(int(r.gold_start), int(r.gold_end), r.gold_label, r.gold_text)] = r.category
        if pd.notna(r.pred_start):
            marks[Span(int(r.pred_start), int(r.pred_end), r.pred_label, r.pred_text)] = r.category
    st.markdown(f"**Example {idx:d}**: gold above, run #{run.run_id:d} below")
    show_html(comparison_html(gold, pred, get_task(run.task), marks=marks))
