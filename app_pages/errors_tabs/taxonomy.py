"""The error taxonomy as a table of the error categories with a bar per row, a click on a row
listing its error rows (the correct rows stated apart, with a button that lists them), and the
tags (nesting, schema violations...).

A table rather than a Plotly bar chart: the data grid's code is on the page already (the rows
list), Plotly's bundle is not, and loading it took 1-2 s of this tab's first open."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import md, selected
from app_pages.errors_tabs.state import seen_filter, select_filter
from app_pages.keys import Errors as K
from cblue_core.store.confusion import CORRECT_CATEGORIES


def split_correct(counts: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(correct categories, error categories) of a run's row counts, each in the given order."""
    correct = {k: n for k, n in counts.items() if k in CORRECT_CATEGORIES}
    return correct, {k: n for k, n in counts.items() if k not in CORRECT_CATEGORIES}


def category_table(errors: dict[str, int]) -> pd.DataFrame:
    """One row per error category, the most frequent first: its rows and share of all error rows."""
    total = sum(errors.values())
    ordered = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
    return pd.DataFrame({"error category": [k for k, _ in ordered], "error rows": [n for _, n in ordered],
                         "share": [n / total if total else 0.0 for _, n in ordered]})


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
        table = category_table(errors)
        st.markdown("**Error categories** (correct rows apart): click a row to list its error rows.")
        event = st.dataframe(
            table, key=K.TAXONOMY, on_select="rerun", selection_mode="single-row", hide_index=True,
            column_config={
                "error category": st.column_config.TextColumn("error category"),
                "error rows": st.column_config.ProgressColumn(
                    "error rows", format="localized", min_value=0, max_value=int(table["error rows"].max())),
                "share": st.column_config.NumberColumn("share of error rows", format="percent")})
        rows = selected(event, "rows")
        if rows and 0 <= int(rows[0]) < len(table):
            select_filter({"category": table["error category"].iloc[int(rows[0])]})
    tags = ws.runs.tag_counts(run.run_id, seen=seen_filter())
    if tags:
        tag = st.selectbox("Or a tag (nesting, schema violations, Combined triples…)",
                           ["(none)"] + list(tags), key=K.TAG,
                           format_func=lambda t: t if t == "(none)" else f"{t} ({tags[t]})")
        if tag != "(none)":
            select_filter({"tag": tag})
