"""Datasets: pick a task split (or upload a file), see its summary, filter, and read examples.

URL query parameters ``task``, ``split`` and ``example`` select what is shown, so a link to
one example can be shared. One module per tab: :mod:`.browse` and :mod:`.upload`.
"""
from __future__ import annotations

import streamlit as st

from app_pages import url_state
from app_pages.common import workspace
from app_pages.datasets import browse, upload
from app_pages.keys import Datasets as K
from app_pages.keys import Param


def render() -> None:
    ws = workspace()
    st.title("Datasets")
    datasets = ws.datasets.all()
    if not datasets:
        st.info("The workspace is empty. Upload a file below, or ingest a CBLUE folder with "
                "`python -m cblue_core ingest PATH`.")
    if url_state.seed(K.TASK, Param.TASK, url_state.one_of({d.task for d in datasets})):
        url_state.seed(K.SPLIT, Param.SPLIT, str)
        url_state.seed(K.EXAMPLE, Param.EXAMPLE, url_state.int_in())
    tab_browse, tab_upload = st.tabs(["Browse the workspace", "Validate or upload a file"])
    with tab_upload:
        upload.render(ws)
    with tab_browse:
        if datasets:
            browse.render(ws, datasets)
