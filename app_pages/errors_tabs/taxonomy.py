"""The error taxonomy as a clickable bar chart, and the tags (nesting, schema violations...)."""
from __future__ import annotations

import streamlit as st

from app_pages.charts import bar_figure
from app_pages.common import plot_labels, selected
from app_pages.errors_tabs.state import seen_filter, select_filter
from app_pages.keys import Errors as K


def render(ws, run) -> None:
    counts = ws.runs.error_counts(run.run_id, seen=seen_filter())
    if not counts:
        st.info("No error taxonomy for this task.")
        return
    categories = plot_labels(counts)
    # The shared builder (plain go.Bar): plotly.express took 0.15-0.6 s per rerun for these few bars.
    fig = bar_figure(counts, title="Error taxonomy", x_title="error category", y_title="error rows",
                     horizontal=True, sort=True)
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=K.TAXONOMY)
    points = selected(event, "points")
    if points:
        select_filter({"category": categories.get(points[0]["y"], points[0]["y"])})
    tags = ws.runs.tag_counts(run.run_id, seen=seen_filter())
    if tags:
        tag = st.selectbox("Or a tag (nesting, schema violations, Combined triples…)",
                           ["(none)"] + list(tags), key=K.TAG,
                           format_func=lambda t: t if t == "(none)" else f"{t} ({tags[t]})")
        if tag != "(none)":
            select_filter({"tag": tag})
