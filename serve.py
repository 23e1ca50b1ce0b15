"""CBLUE Studio served to visitors: ``streamlit run serve.py`` (same options as ``app.py``).

The same app as ``streamlit run app.py``, whose script it runs for every visitor, with one
difference: the pages' modules are imported while the server starts (Streamlit's ``st.App``
lifespan), so the first visitor after a restart does not wait for them
(:mod:`app_pages.warm_up`).
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

from app_pages.warm_up import import_pages


@asynccontextmanager
async def warm_up(_app: st.App) -> AsyncIterator[None]:
    import_pages()
    yield


app = st.App(Path(__file__).with_name("app.py"), lifespan=warm_up)
