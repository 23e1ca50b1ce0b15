"""The error rows behind whatever was clicked (the whole selection counted, the first rows
listed, all of them as a CSV download), and one example with gold and prediction."""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from app_pages import url_state
from app_pages.common import counted, db_path, md, selected, shared_workspace
from app_pages.errors_tabs.state import EXAMPLE_KEY, FILTER_KEY, selection_of
from app_pages.html_view import show_html
from app_pages.keys import Errors as K
from app_pages.keys import Param
from cblue_core.io.table_csv import table_csv
from cblue_core.records import Span
from cblue_core.render.example import comparison_html
from cblue_core.store.error_selection import ErrorSelection
from cblue_core.tasks import get_task

ROW_LIMIT = 2000      # rows sent to the browser; the counts and the CSV cover the whole selection
SHOWN = ["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]


def selection_csv(path: str, run_id: int, selection: ErrorSelection) -> bytes:
    """Every row of the selection as CSV. Streamlit calls it on a thread of its own when the
    download button is clicked: a cursor of its own."""
    return table_csv(shared_workspace(path).cursor().runs.select_errors(run_id, selection, limit=None).rows)


# A fragment: a row click reruns only this part, so the browser does not redraw the chart of the
# open tab above (the 44-label confusion matrix took 0.4 s of drawing per row click).
@st.fragment
def render(ws, run) -> None:
    st.subheader("Examples behind the selection")
    flt = dict(st.session_state.get(FILTER_KEY) or {})
    if not flt:
        st.caption("Click a confusion-matrix cell, a taxonomy bar, a tag or a slice.")
    else:
        selection = selection_of(flt)
        shown = {"slice": flt["slice"]} if "slice" in flt else {}
        shown.update((k, v) for k, v in selection.describe().items() if k not in ("examples", "rows"))
        st.caption("Filter: " + ", ".join(f"{md(k)} = {md(v)}" for k, v in shown.items()))
        found = ws.runs.select_errors(run.run_id, selection, limit=ROW_LIMIT)
        # the whole selection's size; and how much of it the list shows when it is cut
        st.caption(("" if not found.truncated else f"showing the first {len(found.rows):,} of ")
                   + f"{counted(found.total_rows, 'row')} in {counted(found.examples, 'example')}")
        st.download_button(f"Download all {counted(found.total_rows, 'row')} (CSV)",
                           partial(selection_csv, db_path(), run.run_id, selection),
                           file_name=f"run{run.run_id:d}_errors.csv", mime="text/csv", key=K.ROWS_CSV,
                           disabled=not found.total_rows, on_click="ignore")
        view = found.rows[SHOWN]
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
