"""The Errors page: one run's metrics per label, a confusion matrix and an error taxonomy that
click through to the examples behind them, bucketed analysis, saved slices and scores on
corrected gold. One module per tab; only the open tab runs (``st.tabs(on_change="rerun")``),
and what a tab derives from the run is cached (see :mod:`derived`).

URL query parameters ``run``, ``slice`` and ``example`` reopen the same view.
"""
from __future__ import annotations

import streamlit as st

from app_pages.common import pick_run, workspace
from app_pages.errors_tabs import buckets, gold, header, labels, matrix, rows, slices, taxonomy

TABS = ["Per label", "Confusion matrix", "Error taxonomy", "Buckets", "Slices", "Corrected gold"]
DRAW = [labels.render, matrix.render, taxonomy.render, buckets.render, slices.render, gold.render]
SLUGS = ["labels", "matrix", "taxonomy", "buckets", "slices", "gold"]     # ?tab= in the URL


def render() -> None:
    ws = workspace()
    st.title("Errors")
    run = pick_run(ws, "err_run")
    header.render(ws, run)
    wanted = st.query_params.get("tab") or ("slices" if st.query_params.get("slice") else None)
    if wanted in SLUGS and "err_tab" not in st.session_state:   # the URL picks the first tab only
        st.session_state.err_tab = TABS[SLUGS.index(wanted)]
    for tab, draw, slug in zip(st.tabs(TABS, key="err_tab", on_change="rerun"), DRAW, SLUGS):
        if tab.open:
            st.query_params["tab"] = slug
            with tab:
                draw(ws, run)
    rows.render(ws, run)
