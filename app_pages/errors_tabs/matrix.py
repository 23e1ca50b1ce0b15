"""The confusion matrix (labels, entity types, or predicates of matched arguments) as clickable
squares with Σ row and column; every label shown, the figure as large as the labels need."""
from __future__ import annotations

import streamlit as st

from app_pages.charts import confusion_figure
from app_pages.common import selected
from app_pages.errors_tabs.state import FILTER_KEY, seen_filter, select_filter
from app_pages.keys import Errors as K
from cblue_core.tasks import get_task


def render(ws, run) -> None:
    cm = ws.runs.confusion(run.run_id, seen=seen_filter())
    if cm.empty:
        st.info("No confusion pairs for this run (nothing was matched on both sides).")
        return
    task = get_task(run.task)
    normalise = st.toggle("Normalise each row (share of the gold label)", key=K.NORMALISE)
    flt = st.session_state.get(FILTER_KEY) or {}
    chosen = (flt.get("gold_label"), flt.get("pred_label")) if {"gold_label", "pred_label"} & set(flt) else None
    cf = confusion_figure(cm, normalize="row" if normalise else None, selected=chosen,
                          label_text=task.display_label)
    st.caption("Click a cell for its examples; the Σ row and column select a whole gold row or "
               "predicted column. Green borders: the diagonal. Hover a cell for its labels and count.")
    event = st.plotly_chart(cf.figure, on_select="rerun", selection_mode="points", key=K.MATRIX,
                            width="content")
    points = selected(event, "points")
    if points:
        pick = cf.pick(points[0])
        if pick is not None:
            select_filter({k: v for k, v in pick.filter().items() if isinstance(v, str)})
