"""Per-label precision, recall and F1 (or accuracy) of the run: a bar per label and the table."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.charts import bar_figure
from app_pages.errors_tabs.state import shown_summary
from app_pages.keys import Errors as K
from cblue_core.tasks import get_task

MAX_BARS = 60      # CHIP-CDN scores thousands of terms: those get the table alone


def render(ws, run) -> None:
    task = get_task(run.task)
    per_label = shown_summary(ws, run).get("per_label", {})
    if not per_label:
        st.info("This task reports no per-label figures.")
        return
    frame = pd.DataFrame([{"label": task.display_label(k), **v} for k, v in per_label.items()])
    if len(frame) > MAX_BARS or "f1" not in frame:
        st.dataframe(frame, hide_index=True, width="stretch")
        return
    chart, table = st.columns([3, 2])      # the bars need the room: labels take 300 px of it
    f1 = dict(zip(frame["label"], frame["f1"].astype(float)))
    chart.plotly_chart(bar_figure(f1, title="F1 per label", x_title="label", y_title="F1 (0-1)",
                                  horizontal=True, sort=True, numbers=False), key=K.LABEL_CHART)
    table.dataframe(frame, hide_index=True, width="stretch")
