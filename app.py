"""CBLUE Studio: entry point. `streamlit run app.py`"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages.common import sidebar

ICON = Path(__file__).resolve().parent / "assets" / "icon.png"

# A local icon: a Material icon name would make the browser fetch the icon font from Google.
st.set_page_config(page_title="CBLUE Studio", page_icon=str(ICON), layout="wide")

PAGES = [
    st.Page("app_pages/datasets.py", title="Datasets", icon=":material/dataset:", url_path="datasets", default=True),
    st.Page("app_pages/live.py", title="Live", icon=":material/bolt:", url_path="live"),
    st.Page("app_pages/runs.py", title="Runs", icon=":material/flag:", url_path="runs"),
    st.Page("app_pages/errors.py", title="Errors", icon=":material/search:", url_path="errors"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("app_pages/annotate.py", title="Annotate", icon=":material/edit:", url_path="annotate"),
]

page = st.navigation(PAGES)
sidebar()
page.run()
