"""The error taxonomy as a clickable bar chart of the error categories (the correct rows stated
apart, with a button that lists them), and the tags (nesting, schema violations...)."""
from __future__ import annotations

import streamlit as st

from app_pages.charts import bar_figure
from app_pages.common import md, plot_labels, selected
from app_pages.errors_tabs.state import seen_filter, select_filter
from app_pages.keys import Errors as K
from cblue_core.store.confusion import CORRECT_CATEGORIES


def split_correct(counts: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(correct categories, error categories) of a run's row counts, each in the given order."""
    correct = {k: n for k, n in counts.items() if k in CORRECT_CATEGORIES}
    return correct, {k: n for k, n in counts.items() if k not in CORRECT_CATEGORIES}


def render(ws, run) -> None:
    counts = ws.runs.error_counts(run.run_id, seen=seen_filter())
    if not counts:
        st.info("No error taxonomy for this task.")
        return
    correct, errors = split_correct(counts)
    n_correct, n_errors = sum(correct.values()), sum(errors.values())
    c1, c2 = st.columns([3, 1], vertical_alignment="center")
    kinds = ", ".join(f"{k} {n:,}" for k, n in correct.items())
    c1.markdown(f"**{n_errors:,}** error rows and **{n_correct:,}** correct rows"
                + (f" ({md(kinds)})" if len(correct) > 1 else "") + ". "
                "A row is one gold item, one predicted item, or a pair of them.")
    if len(correct) == 1 and c2.button(f"List the {n_correct:,} correct rows", key=K.TAXONOMY_CORRECT):
        select_filter({"category": next(iter(correct))})
    if not errors:
        st.success("No error rows: every item was matched.")
    else:
        categories = plot_labels(errors)
        # The shared builder (plain go.Bar): plotly.express took 0.15-0.6 s per rerun for these few bars.
        fig = bar_figure(errors, title="Error categories (correct rows apart)", x_title="error category",
                         y_title="error rows", horizontal=True, sort=True)
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
