"""The Errors page: one run's metrics per label, a confusion matrix and an error taxonomy that
click through to the examples behind them, bucketed analysis, saved slices and scores on
corrected gold. One module per tab; only the open tab runs (``st.tabs(on_change="rerun")``),
and what a tab derives from the run is cached (see :mod:`derived`).

URL query parameters ``run``, ``slice`` and ``example`` reopen the same view.
"""
from __future__ import annotations

import streamlit as st

from app_pages import url_state
from app_pages.common import pick_run, workspace
from app_pages.errors_tabs import buckets, gold, header, labels, matrix, rows, slices, taxonomy
from app_pages.keys import Errors as K
from app_pages.keys import Param

TABS = ["Per label", "Confusion matrix", "Error taxonomy", "Buckets", "Slices", "Corrected gold"]
DRAW = [labels.render, matrix.render, taxonomy.render, buckets.render, slices.render, gold.render]
SLUGS = ["labels", "matrix", "taxonomy", "buckets", "slices", "gold"]     # ?tab= in the URL


def render() -> None:
    ws = workspace()
    st.title("Errors")
    run = pick_run(ws, K.RUN)
    header.render(ws, run)
    # the URL picks the first tab only; a slice link opens the Slices tab
    if not url_state.seed(K.TAB, Param.TAB, url_state.mapped(dict(zip(SLUGS, TABS)))):
        url_state.seed(K.TAB, Param.SLICE, lambda _name: "Slices")
    for tab, draw, slug in zip(st.tabs(TABS, key=K.TAB, on_change="rerun"), DRAW, SLUGS):
        if tab.open:
            url_state.show({Param.TAB: slug})
            with tab:
                draw(ws, run)
    rows.render(ws, run)
