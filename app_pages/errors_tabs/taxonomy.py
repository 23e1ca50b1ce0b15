"""The error taxonomy as a clickable bar chart, and the tags (nesting, schema violations...)."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from app_pages.common import plot_labels, selected
from app_pages.errors_tabs.state import select_filter
from app_pages.keys import Errors as K


def render(ws, run) -> None:
    counts = ws.runs.error_counts(run.run_id)
    if not counts:
        st.info("No error taxonomy for this task.")
        return
    categories = plot_labels(counts)
    tax = pd.DataFrame({"category": list(categories), "rows": list(counts.values())})
    fig = px.bar(tax, x="rows", y="category", orientation="h", text="rows")
    fig.update_layout(yaxis={"categoryorder": "total ascending", "title": "error category"},
                      xaxis={"title": "error rows"}, height=80 + 32 * len(tax))
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=K.TAXONOMY)
    points = selected(event, "points")
    if points:
        select_filter({"category": categories.get(points[0]["y"], points[0]["y"])})
    tags = ws.runs.tag_counts(run.run_id)
    if tags:
        tag = st.selectbox("Or a tag (nesting, schema violations, Combined triples…)",
                           ["(none)"] + list(tags), key=K.TAG,
                           format_func=lambda t: t if t == "(none)" else f"{t} ({tags[t]})")
        if tag != "(none)":
            select_filter({"tag": tag})
